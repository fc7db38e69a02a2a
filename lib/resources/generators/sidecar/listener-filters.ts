/**
 * The filters a sidecar's listeners are made of, as istiod builds them
 * (pilot/pkg/networking/core/listener_builder.go buildHTTPConnectionManager,
 * buildOutboundCatchAllNetworkFiltersOnly; pilot/pkg/xds/filters: OriginalDestination, TLSInspector,
 * HTTPInspector, RawBufferTransportProtocol): HttpConnectionManager over RDS (ADS, v3) or with an
 * inline RouteConfiguration, tcp_proxy, and the listener filters.
 */
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  AggregatedConfigSourceSchema,
  ApiVersion,
  ConfigSourceSchema,
} from "../../../gen/envoy/config/core/v3/config_source_pb.ts";
import {
  type Filter,
  type FilterChain,
  FilterChainMatchSchema,
  FilterChainSchema,
  FilterSchema,
  type ListenerFilter,
  ListenerFilterSchema,
} from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { RouteConfiguration } from "../../../gen/envoy/config/route/v3/route_pb.ts";
import { RouterSchema } from "../../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { HttpInspectorSchema } from "../../../gen/envoy/extensions/filters/listener/http_inspector/v3/http_inspector_pb.ts";
import { OriginalDstSchema } from "../../../gen/envoy/extensions/filters/listener/original_dst/v3/original_dst_pb.ts";
import { TlsInspectorSchema } from "../../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import {
  type HttpConnectionManager,
  HttpConnectionManager_CodecType,
  HttpConnectionManager_PathWithEscapedSlashesAction,
  HttpConnectionManager_UpgradeConfigSchema,
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
  RdsSchema,
} from "../../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { TcpProxySchema } from "../../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { HashPolicy_SourceIpSchema, HashPolicySchema } from "../../../gen/envoy/type/v3/hash_policy_pb.ts";
import { durationOf } from "../cluster-policy.ts";
import { ROUTER_FILTER_NAME } from "../listener.ts";
import { emptyFaultConfig, FAULT_FILTER_NAME } from "../route-fault.ts";
import { deepFreeze, message } from "../shared.ts";
import { BLACK_HOLE_CLUSTER, PASSTHROUGH_CLUSTER } from "./cluster.ts";
import type { OutboundTrafficMode } from "./types.ts";

/** wellknown.HTTPConnectionManager. */
export const HCM_FILTER_NAME = "envoy.filters.network.http_connection_manager";
/** wellknown.TCPProxy. */
export const TCP_PROXY_FILTER_NAME = "envoy.filters.network.tcp_proxy";
/** xdsfilters.RawBufferTransportProtocol: plaintext, as Envoy names a connection without TLS. */
export const RAW_BUFFER = "raw_buffer";
/** plaintextHTTPALPNs: what the HTTP inspector reports for HTTP/1.1 and cleartext HTTP/2. */
export const PLAINTEXT_HTTP_ALPNS: readonly string[] = Object.freeze(["http/1.1", "h2c"]);
/** util.PassthroughFilterChain: an outbound listener's default chain when no service chain takes all. */
export const PASSTHROUGH_FILTER_CHAIN = "PassthroughFilterChain";

function listenerFilter<D extends DescMessage>(name: string, schema: D): ListenerFilter {
  return deepFreeze(
    message(ListenerFilterSchema, {
      name,
      configType: { case: "typedConfig", value: anyPack(schema, create(schema) as MessageShape<D>) },
    }),
  );
}

/** xdsfilters.OriginalDestination: restores the address iptables redirected from. */
export const originalDstFilter = listenerFilter("envoy.filters.listener.original_dst", OriginalDstSchema);
/** xdsfilters.TLSInspector. */
export const tlsInspectorFilter = listenerFilter("envoy.filters.listener.tls_inspector", TlsInspectorSchema);
/** xdsfilters.HTTPInspector: detects HTTP/1.x and h2c for protocol sniffing. */
export const httpInspectorFilter = listenerFilter(
  "envoy.filters.listener.http_inspector",
  HttpInspectorSchema,
);

/** A network filter holding `config` packed as its typed_config. */
function networkFilter<D extends DescMessage>(name: string, schema: D, config: MessageShape<D>): Filter {
  return message(FilterSchema, { name, configType: { case: "typedConfig", value: anyPack(schema, config) } });
}

/**
 * tcp_proxy to `cluster`, its stats under `statPrefix` (istiod uses the cluster name); with
 * `hashSourceIp` the source-IP hash policy (maybeSetHashPolicy: a DestinationRule's
 * consistentHash.useSourceIp, so a ring-hash TCP cluster keeps a client on one endpoint).
 */
export function tcpProxyFilter(cluster: string, statPrefix = cluster, hashSourceIp = false): Filter {
  return networkFilter(
    TCP_PROXY_FILTER_NAME,
    TcpProxySchema,
    message(TcpProxySchema, {
      statPrefix,
      clusterSpecifier: { case: "cluster", value: cluster },
      ...(hashSourceIp && { hashPolicy: [sourceIpHash] }),
    }),
  );
}

const sourceIpHash = deepFreeze(
  message(HashPolicySchema, {
    policySpecifier: { case: "sourceIp", value: create(HashPolicy_SourceIpSchema) },
  }),
);

/** The cluster unknown outbound traffic goes to: PassthroughCluster (ALLOW_ANY) or BlackHoleCluster. */
export function catchAllCluster(mode: OutboundTrafficMode): string {
  return mode === "ALLOW_ANY" ? PASSTHROUGH_CLUSTER : BLACK_HOLE_CLUSTER;
}

/**
 * A filter chain; `match` undefined is a chain that matches everything (istiod leaves
 * filter_chain_match unset then, except on the PassthroughFilterChain, which gets an empty one).
 */
export function filterChain(
  filters: Filter[],
  options: {
    name?: string;
    match?: {
      destinationPort?: number;
      transportProtocol?: string;
      applicationProtocols?: readonly string[];
      serverNames?: readonly string[];
    };
    /** The chain's metadata (a Sidecar ingress chain names its Sidecar: BuildConfigInfoMetadata). */
    metadata?: FilterChain["metadata"];
    /** The TLS the chain terminates (an mTLS inbound chain); absent: plaintext as matched. */
    transportSocket?: FilterChain["transportSocket"];
  } = {},
): FilterChain {
  const m = options.match;
  return message(FilterChainSchema, {
    ...(options.name !== undefined && { name: options.name }),
    ...(options.metadata && { metadata: options.metadata }),
    ...(m && {
      filterChainMatch: message(FilterChainMatchSchema, {
        ...(m.destinationPort !== undefined && { destinationPort: m.destinationPort }),
        ...(m.transportProtocol !== undefined && { transportProtocol: m.transportProtocol }),
        ...(m.applicationProtocols && { applicationProtocols: [...m.applicationProtocols] }),
        ...(m.serverNames && { serverNames: [...m.serverNames] }),
      }),
    }),
    filters,
    ...(options.transportSocket && { transportSocket: options.transportSocket }),
  });
}

/** The HTTP filters of every sidecar HttpConnectionManager: fault (routes override it), then router. */
const httpFilters = deepFreeze([
  message(HttpFilterSchema, {
    name: FAULT_FILTER_NAME,
    configType: { case: "typedConfig", value: emptyFaultConfig },
  }),
  message(HttpFilterSchema, {
    name: ROUTER_FILTER_NAME,
    configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
  }),
]);

const websocket = deepFreeze(
  message(HttpConnectionManager_UpgradeConfigSchema, { upgradeType: "websocket" }),
);
const zero = deepFreeze(durationOf(0));

/** Istio's RDS config source: ADS, initial_fetch_timeout 0s (wait for the routes), v3. */
const rdsSource = deepFreeze(
  message(ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: create(AggregatedConfigSourceSchema) },
    initialFetchTimeout: zero,
    resourceApiVersion: ApiVersion.V3,
  }),
);

/**
 * buildHTTPConnectionManager for a sidecar: codec AUTO, `statPrefix`, routes by RDS `route` (a
 * name) or inline (a RouteConfiguration), use_remote_address false, websocket upgrades, no stream
 * idle timeout, normalize_path true, escaped slashes kept (the mesh default path normalization),
 * then `leading` (an inbound chain's RBAC filters, which istiod puts before all others), the fault
 * and router filters; `extra` sets the fields a gateway's connection manager adds
 * (buildGatewayConnectionManager: remote address, client certificate details).
 */
export function httpConnectionManagerFilter(
  statPrefix: string,
  route: string | RouteConfiguration,
  leading: readonly HttpFilter[] = [],
  extra: Partial<Omit<HttpConnectionManager, "$typeName" | "$unknown">> = {},
): Filter {
  return networkFilter(
    HCM_FILTER_NAME,
    HttpConnectionManagerSchema,
    message(HttpConnectionManagerSchema, {
      codecType: HttpConnectionManager_CodecType.AUTO,
      statPrefix,
      routeSpecifier:
        typeof route === "string"
          ? { case: "rds", value: message(RdsSchema, { configSource: rdsSource, routeConfigName: route }) }
          : { case: "routeConfig", value: route },
      httpFilters: [...leading, ...httpFilters],
      useRemoteAddress: false,
      upgradeConfigs: [websocket],
      streamIdleTimeout: zero,
      normalizePath: true,
      pathWithEscapedSlashesAction: HttpConnectionManager_PathWithEscapedSlashesAction.KEEP_UNCHANGED,
      ...extra,
    }),
  );
}
