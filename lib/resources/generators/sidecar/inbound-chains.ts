/**
 * The filter chains of a sidecar's inbound listeners and the listener filters they need, as istiod
 * builds them (pilot/pkg/networking/core/listener_inbound.go inboundChainForOpts, inboundChainConfig
 * Name / StatPrefix / ToFilterChainMatch, buildInboundNetworkFilters(ForHTTP), populateListenerFilters,
 * buildTLSInspector, buildHTTPInspector; networkfilter.go buildCompleteNetworkFilters): one chain per
 * match option of the port's mTLS mode (inbound-tls.ts), HTTP ones ending in an HttpConnectionManager
 * with an inline route, TCP ones in tcp_proxy, the workload's RBAC filters before either.
 */
import {
  type FilterChain,
  type ListenerFilter,
  type ListenerFilterChainMatchPredicate,
  ListenerFilterChainMatchPredicate_MatchSetSchema,
  ListenerFilterChainMatchPredicateSchema,
  ListenerFilterSchema,
} from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { VirtualHostSchema } from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import { RouteConfigurationSchema } from "../../../gen/envoy/config/route/v3/route_pb.ts";
import { Int32RangeSchema } from "../../../gen/envoy/type/v3/range_pb.ts";
import { message } from "../shared.ts";
import { altStatName } from "./cluster-common.ts";
import { chainOptions, type InboundMode, type InboundTlsSockets, TLS_TRANSPORT } from "./inbound-tls.ts";
import {
  filterChain,
  httpConnectionManagerFilter,
  httpInspectorFilter,
  originalDstFilter,
  tcpProxyFilter,
  tlsInspectorFilter,
} from "./listener-filters.ts";
import type { PortKind } from "./outbound-ports.ts";
import { defaultInboundRoute } from "./route-default.ts";
import type { InboundAuthz } from "./types.ts";

/** model.VirtualInboundListenerName (also the inbound passthrough TCP chains' name). */
export const VIRTUAL_INBOUND = "virtualInbound";

/** One port's chains to build (istiod's inboundChainConfig, the parts used). */
export interface InboundChainConfig {
  cluster: string;
  /** The target port the chains match; 0: the passthrough chains that match any port. */
  port: number;
  /** A passthrough chain (to InboundPassthroughCluster): istiod's fixed names, its cluster as stat prefix. */
  passthrough: boolean;
  kind: PortKind;
  /** The trace operation of the inline route: `<host>:<service port>/*`. */
  operation: string;
  /** The bind address chains are named after: `<bind>_<port>`. */
  bind: string;
  /** A Sidecar ingress chain's metadata (BuildConfigInfoMetadata). */
  metadata?: FilterChain["metadata"];
}

/** What every chain of one proxy shares: the mesh's TLS sockets and the workload's RBAC filters. */
export interface InboundChainContext {
  sockets: InboundTlsSockets;
  authz?: InboundAuthz;
}

/**
 * inboundChainForOpts: one chain per match option of `mode` for the port's kind, in istiod's order,
 * matched by destination port (unless 0), transport protocol and ALPN; TLS options terminate with
 * the mesh's DownstreamTlsContext. Names: `<bind>_<port>`, or for passthrough
 * `virtualInbound-catchall-http` (HTTP) and `virtualInbound` (TCP).
 */
export function inboundChains(
  cc: InboundChainConfig,
  mode: InboundMode,
  ctx: InboundChainContext,
): FilterChain[] {
  const name = (http: boolean) =>
    cc.passthrough ? (http ? `${VIRTUAL_INBOUND}-catchall-http` : VIRTUAL_INBOUND) : `${cc.bind}_${cc.port}`;
  // inboundChainConfig.StatPrefix: the cluster's name for passthrough, else inbound_<chain>; delimited.
  const statPrefix = altStatName(cc.passthrough ? cc.cluster : `inbound_${cc.bind}_${cc.port}`);
  // A passthrough chain's service port is 0 (its virtual host `inbound|http|0`), even when it matches one.
  const route = inboundRouteConfiguration(cc.cluster, cc.passthrough ? 0 : cc.port, cc.operation);
  return chainOptions(cc.kind, mode).map((opt) => {
    const http = opt.protocol === "http";
    const filters = http
      ? [httpConnectionManagerFilter(statPrefix, route, ctx.authz?.http)]
      : [...(ctx.authz?.tcp ?? []), tcpProxyFilter(cc.cluster)];
    return filterChain(filters, {
      name: name(http),
      ...(cc.metadata && { metadata: cc.metadata }),
      match: {
        ...(cc.port > 0 && { destinationPort: cc.port }),
        transportProtocol: opt.transportProtocol,
        ...(opt.applicationProtocols && { applicationProtocols: opt.applicationProtocols }),
      },
      ...(opt.tls && { transportSocket: ctx.sockets[opt.protocol] }),
    });
  });
}

/**
 * buildSidecarInboundHTTPRouteConfig: RouteConfiguration `<cluster>` with the one virtual host
 * `inbound|http|<port>`, domains `*`, the default inbound route; validate_clusters false.
 */
function inboundRouteConfiguration(cluster: string, port: number, operation: string) {
  return message(RouteConfigurationSchema, {
    name: cluster,
    validateClusters: false,
    virtualHosts: [
      message(VirtualHostSchema, {
        name: `inbound|http|${port}`,
        domains: ["*"],
        routes: [defaultInboundRoute(cluster, operation)],
      }),
    ],
  });
}

/**
 * populateListenerFilters: original_dst unless the listener binds its port itself; the TLS
 * inspector when a chain matches TLS, the HTTP inspector (after it) when one matches a plaintext
 * HTTP ALPN, each disabled on the destination ports none of whose chains needs it (port 0 being the
 * chains that match any port).
 */
export function inboundListenerFilters(
  chains: readonly FilterChain[],
  bindToPort: boolean,
): ListenerFilter[] {
  const needs = new Map<number, { tls: boolean; http: boolean }>();
  for (const c of chains) {
    const m = c.filterChainMatch;
    const port = m?.destinationPort ?? 0;
    const tls = m?.transportProtocol === TLS_TRANSPORT;
    const http = (m?.applicationProtocols ?? []).some((a) => a === "http/1.1" || a === "h2c");
    const seen = needs.get(port) ?? { tls: false, http: false };
    needs.set(port, { tls: seen.tls || tls, http: seen.http || http });
  }
  const entries = [...needs].sort(([a], [b]) => a - b);
  const out: ListenerFilter[] = bindToPort ? [] : [originalDstFilter];
  if (entries.some(([, n]) => n.tls)) {
    // buildTLSInspector: on by default when the any-port chains need it (then off where no chain
    // does), else on only where a chain needs it.
    const byDefault = needs.get(0)?.tls === true;
    const ports = entries.filter(([p, n]) => p !== 0 && n.tls !== byDefault).map(([p]) => p);
    out.push(
      ports.length === 0
        ? tlsInspectorFilter
        : withDisabled(tlsInspectorFilter, byDefault ? excludePorts(ports) : includePorts(ports)),
    );
  }
  if (entries.some(([, n]) => n.http)) {
    const ports = entries.filter(([, n]) => !n.http).map(([p]) => p);
    out.push(
      ports.length === 0 ? httpInspectorFilter : withDisabled(httpInspectorFilter, excludePorts(ports)),
    );
  }
  return out;
}

function withDisabled(filter: ListenerFilter, filterDisabled: ListenerFilterChainMatchPredicate) {
  return message(ListenerFilterSchema, { ...filter, filterDisabled });
}

/** listenerPredicateExcludePorts: matches the ports given (one alone, several as an or_match). */
function excludePorts(ports: readonly number[]): ListenerFilterChainMatchPredicate {
  const ranges = ports.map((p) =>
    message(ListenerFilterChainMatchPredicateSchema, {
      rule: { case: "destinationPortRange", value: message(Int32RangeSchema, { start: p, end: p + 1 }) },
    }),
  );
  if (ranges.length === 1) return ranges[0] as ListenerFilterChainMatchPredicate;
  return message(ListenerFilterChainMatchPredicateSchema, {
    rule: {
      case: "orMatch",
      value: message(ListenerFilterChainMatchPredicate_MatchSetSchema, { rules: ranges }),
    },
  });
}

/** listenerPredicateIncludePorts: matches every port but those given. */
function includePorts(ports: readonly number[]): ListenerFilterChainMatchPredicate {
  return message(ListenerFilterChainMatchPredicateSchema, {
    rule: { case: "notMatch", value: excludePorts(ports) },
  });
}
