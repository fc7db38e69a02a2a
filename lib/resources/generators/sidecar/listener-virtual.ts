/**
 * The two capture listeners of a sidecar redirected by iptables, as istiod builds them
 * (pilot/pkg/networking/core/listener_builder.go buildVirtualOutboundListener,
 * buildOutboundCatchAllNetworkFilterChains, blackholeFilterChain; listener_inbound.go
 * inboundVirtualListener, buildInboundPassthroughChains, inboundChainForOpts, populateListenerFilters;
 * model constants VirtualOutboundListenerName, VirtualInboundListenerName, the chain names).
 * Inbound chains are the plaintext ones (mTLS DISABLE): no certificates exist yet, so PERMISSIVE's
 * TLS chains have nothing to terminate with.
 */
import { AddressSchema, SocketAddressSchema } from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { MetadataSchema, TrafficDirection } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  type FilterChain,
  type ListenerFilter,
  type ListenerFilterChainMatchPredicate,
  ListenerFilterChainMatchPredicate_MatchSetSchema,
  ListenerFilterChainMatchPredicateSchema,
  ListenerFilterSchema,
} from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../../gen/envoy/config/listener/v3/listener_pb.ts";
import { VirtualHostSchema } from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import { RouteConfigurationSchema } from "../../../gen/envoy/config/route/v3/route_pb.ts";
import { Int32RangeSchema } from "../../../gen/envoy/type/v3/range_pb.ts";
import { durationOf } from "../cluster-policy.ts";
import { message } from "../shared.ts";
import { BLACK_HOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER } from "./cluster.ts";
import { altStatName, inboundClusterName } from "./cluster-common.ts";
import { ingressChains } from "./inbound-ingress.ts";
import {
  catchAllCluster,
  filterChain,
  httpConnectionManagerFilter,
  httpInspectorFilter,
  originalDstFilter,
  PLAINTEXT_HTTP_ALPNS,
  RAW_BUFFER,
  tcpProxyFilter,
} from "./listener-filters.ts";
import { WILDCARD } from "./listener-outbound.ts";
import { portKind } from "./outbound-ports.ts";
import { defaultInboundRoute } from "./route-default.ts";
import type { ServiceInstance, SidecarIngressScope, SidecarInputs } from "./types.ts";

/** model.VirtualOutboundListenerName. */
export const VIRTUAL_OUTBOUND = "virtualOutbound";
/** model.VirtualInboundListenerName (also the inbound passthrough TCP chain's name). */
export const VIRTUAL_INBOUND = "virtualInbound";
/** MeshConfig.proxyListenPort: where iptables redirects outbound traffic. */
export const PROXY_LISTEN_PORT = 15001;
/** MeshConfig.proxyInboundListenPort: where iptables redirects inbound traffic. */
export const PROXY_INBOUND_LISTEN_PORT = 15006;

const zero = durationOf(0);

/** Under INTERCEPTION_MODE TPROXY both capture listeners are transparent (istiod sets it then only). */
function transparent(inputs: SidecarInputs): { transparent?: boolean } {
  return inputs.proxy.metadata.interceptionMode === "TPROXY" ? { transparent: true } : {};
}

function wildcardAddress(port: number) {
  return message(AddressSchema, {
    address: {
      case: "socketAddress",
      value: message(SocketAddressSchema, {
        address: WILDCARD,
        portSpecifier: { case: "portValue", value: port },
      }),
    },
  });
}

/**
 * virtualOutbound: 0.0.0.0:15001, use_original_dst (each connection goes to the listener of its
 * original destination), and for what no listener takes: `virtualOutbound-blackhole` (a connection
 * to 15001 itself ▶ BlackHoleCluster, so nothing loops) then `virtualOutbound-catchall-tcp`
 * (PassthroughCluster under ALLOW_ANY, else BlackHoleCluster).
 */
export function virtualOutboundListener(inputs: SidecarInputs): Listener {
  return message(ListenerSchema, {
    name: VIRTUAL_OUTBOUND,
    address: wildcardAddress(PROXY_LISTEN_PORT),
    useOriginalDst: true,
    ...transparent(inputs),
    trafficDirection: TrafficDirection.OUTBOUND,
    filterChains: [
      filterChain([tcpProxyFilter(BLACK_HOLE_CLUSTER)], {
        name: `${VIRTUAL_OUTBOUND}-blackhole`,
        match: { destinationPort: PROXY_LISTEN_PORT },
      }),
      filterChain([tcpProxyFilter(catchAllCluster(inputs.mesh.outboundTrafficPolicy))], {
        name: `${VIRTUAL_OUTBOUND}-catchall-tcp`,
      }),
    ],
  });
}

/**
 * virtualInbound: 0.0.0.0:15006 with the original_dst listener filter, then the HTTP inspector
 * (disabled on ports whose chains need no sniffing). Chains: `virtualInbound-blackhole` (port 15006
 * itself), the passthrough pair to InboundPassthroughCluster (`virtualInbound-catchall-http` by
 * ALPN, `virtualInbound` for the rest), then per target port of the proxy's service instances
 * (first instance of a port wins, ports ascending) chains `0.0.0.0_<port>` to `inbound|<port>||`
 * (with a Sidecar's ingress listeners, theirs instead: `<bind>_<port>`, metadata naming the Sidecar):
 * HTTP ▶ HttpConnectionManager with an inline route; TCP ▶ tcp_proxy; unknown ▶ both, HTTP by ALPN.
 */
export function virtualInboundListener(inputs: SidecarInputs): Listener {
  const chains: FilterChain[] = [
    filterChain([tcpProxyFilter(BLACK_HOLE_CLUSTER)], {
      name: `${VIRTUAL_INBOUND}-blackhole`,
      match: { destinationPort: PROXY_INBOUND_LISTEN_PORT },
    }),
    ...inboundChains(INBOUND_PASSTHROUGH_CLUSTER, 0, "sniffed", ":0/*"),
  ];
  const noSniffing: number[] = [];
  if (inputs.ingress) {
    const meta = sidecarMetadata(inputs.ingress);
    for (const c of ingressChains(inputs, inputs.ingress)) {
      const kind = portKind(c.protocol);
      if (!kind || c.bindToPort) continue;
      const port = c.listener.port;
      if (kind !== "sniffed") noSniffing.push(port);
      chains.push(...inboundChains(inboundClusterName(port), port, kind, c.operation, c.bind, meta));
    }
  } else
    for (const inst of inboundInstances(inputs)) {
      const kind = portKind(inst.servicePort.protocol);
      if (!kind) continue;
      if (kind !== "sniffed") noSniffing.push(inst.targetPort);
      const operation = `${inst.service.hostname}:${inst.servicePort.port}/*`;
      chains.push(...inboundChains(inboundClusterName(inst.targetPort), inst.targetPort, kind, operation));
    }
  return message(ListenerSchema, {
    name: VIRTUAL_INBOUND,
    address: wildcardAddress(PROXY_INBOUND_LISTEN_PORT),
    ...transparent(inputs),
    trafficDirection: TrafficDirection.INBOUND,
    continueOnListenerFiltersTimeout: true,
    listenerFilters: [originalDstFilter, httpInspector(noSniffing)],
    listenerFiltersTimeout: zero,
    filterChains: chains,
  });
}

/** The proxy's service instances, one per target port (the first in hostname order), ascending. */
export function inboundInstances(inputs: SidecarInputs): ServiceInstance[] {
  const byPort = new Map<number, ServiceInstance>();
  const sorted = [...inputs.instances].sort(
    (a, b) =>
      a.targetPort - b.targetPort ||
      (a.service.hostname < b.service.hostname ? -1 : a.service.hostname > b.service.hostname ? 1 : 0),
  );
  for (const inst of sorted) if (!byPort.has(inst.targetPort)) byPort.set(inst.targetPort, inst);
  return [...byPort.values()];
}

/**
 * inboundChainForOpts with the plaintext options: HTTP ▶ one HCM chain over raw_buffer; TCP ▶ one
 * tcp_proxy chain over raw_buffer; sniffed ▶ the HCM chain by ALPN, then the tcp_proxy chain. A
 * passthrough pair (`port` 0) is named as istiod names it and matches no port.
 */
function inboundChains(
  cluster: string,
  port: number,
  kind: "http" | "tcp" | "sniffed",
  operation: string,
  bind = WILDCARD,
  metadata?: FilterChain["metadata"],
) {
  const passthrough = port === 0;
  const chainName = (http: boolean) =>
    passthrough ? (http ? `${VIRTUAL_INBOUND}-catchall-http` : VIRTUAL_INBOUND) : `${bind}_${port}`;
  const portMatch = passthrough ? {} : { destinationPort: port };
  const out: FilterChain[] = [];
  if (kind !== "tcp") {
    // inboundChainConfig.StatPrefix: the cluster's name for passthrough, else inbound_<chain>; delimited.
    const statPrefix = altStatName(passthrough ? cluster : `inbound_${bind}_${port}`);
    out.push(
      filterChain(
        [httpConnectionManagerFilter(statPrefix, inboundRouteConfiguration(cluster, port, operation))],
        {
          name: chainName(true),
          ...(metadata && { metadata }),
          match: {
            ...portMatch,
            transportProtocol: RAW_BUFFER,
            ...(kind === "sniffed" && { applicationProtocols: PLAINTEXT_HTTP_ALPNS }),
          },
        },
      ),
    );
  }
  if (kind !== "http")
    out.push(
      filterChain([tcpProxyFilter(cluster)], {
        name: chainName(false),
        ...(metadata && { metadata }),
        match: { ...portMatch, transportProtocol: RAW_BUFFER },
      }),
    );
  return out;
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
 * The HTTP inspector of populateListenerFilters: on for every port but those whose chains never
 * sniff by ALPN (filter_disabled on their destination ports; one port alone, several as an or_match).
 */
function httpInspector(disabledPorts: readonly number[]): ListenerFilter {
  if (disabledPorts.length === 0) return httpInspectorFilter;
  const ranges = disabledPorts.map((p) =>
    message(ListenerFilterChainMatchPredicateSchema, {
      rule: { case: "destinationPortRange", value: message(Int32RangeSchema, { start: p, end: p + 1 }) },
    }),
  );
  const filterDisabled: ListenerFilterChainMatchPredicate =
    ranges.length === 1
      ? (ranges[0] as ListenerFilterChainMatchPredicate)
      : message(ListenerFilterChainMatchPredicateSchema, {
          rule: {
            case: "orMatch",
            value: message(ListenerFilterChainMatchPredicate_MatchSetSchema, { rules: ranges }),
          },
        });
  return message(ListenerFilterSchema, { ...httpInspectorFilter, filterDisabled });
}

/** BuildConfigInfoMetadata of a Sidecar: `istio.config` `/apis/networking.istio.io/v1alpha3/namespaces/<ns>/sidecar/<name>`. */
function sidecarMetadata(scope: SidecarIngressScope): FilterChain["metadata"] {
  const config = `/apis/networking.istio.io/v1alpha3/namespaces/${scope.namespace}/sidecar/${scope.name}`;
  return message(MetadataSchema, { filterMetadata: { istio: { config } } });
}

/**
 * inboundCustomListener: a listener of its own, bound to `<bind>:<port>` and named `<bind>_<port>`,
 * for each Sidecar ingress listener that binds to its port (captureMode NONE, or DEFAULT under
 * INTERCEPTION_MODE NONE); no original_dst filter (nothing redirected it), the HTTP inspector only
 * when its chains sniff.
 */
export function boundInboundListeners(inputs: SidecarInputs): Listener[] {
  if (!inputs.ingress) return [];
  const meta = sidecarMetadata(inputs.ingress);
  const out: Listener[] = [];
  for (const c of ingressChains(inputs, inputs.ingress)) {
    const kind = portKind(c.protocol);
    if (!kind || !c.bindToPort) continue;
    const port = c.listener.port;
    out.push(
      message(ListenerSchema, {
        name: `${c.bind}_${port}`,
        address: message(AddressSchema, {
          address: {
            case: "socketAddress",
            value: message(SocketAddressSchema, {
              address: c.bind,
              portSpecifier: { case: "portValue", value: port },
            }),
          },
        }),
        trafficDirection: TrafficDirection.INBOUND,
        continueOnListenerFiltersTimeout: true,
        listenerFilters: kind === "sniffed" ? [httpInspectorFilter] : [],
        listenerFiltersTimeout: zero,
        filterChains: inboundChains(inboundClusterName(port), port, kind, c.operation, c.bind, meta),
      }),
    );
  }
  return out;
}
