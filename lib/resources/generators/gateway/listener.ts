/**
 * LDS for a gateway proxy, as istiod's buildGatewayListeners builds it (pilot/pkg/networking/core
 * gateway.go buildGatewayTCPBasedFilterChains, createGatewayHTTPFilterChainOpts,
 * buildGatewayConnectionManager, createGatewayTCPFilterChainOpts,
 * buildGatewayNetworkFiltersFromTCPRoutes / FromTLSRoutes; listener.go buildGatewayListener): one
 * listener `<bind>_<port>` per merged port (bind: the server's, else the wildcard), bound to the
 * port. A plaintext HTTP port has one chain, a connection manager over RDS `http.<port>`; a TLS port
 * one chain per server, matched by SNI: an HTTPS server terminating TLS gets its TLS context and a
 * connection manager over `https.<port>.<portName>.<gw>.<ns>`; a PASSTHROUGH server one chain per
 * matching `tls` route of a bound VirtualService (its sniHosts ▶ tcp_proxy); an AUTO_PASSTHROUGH
 * server one chain per SNI DNAT cluster its hosts cover (sni-dnat.ts); a TCP server (with or
 * without TLS termination) the first matching `tcp` route. A port whose servers yield no chain
 * gets no listener (istiod omits it). Pure.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema } from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { TrafficDirection } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import { Http1ProtocolOptionsSchema } from "../../../gen/envoy/config/core/v3/protocol_pb.ts";
import {
  type Filter,
  type FilterChain,
  FilterChainSchema,
  FilterSchema,
  type ListenerFilter,
} from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../../gen/envoy/config/listener/v3/listener_pb.ts";
import {
  HttpConnectionManager_ForwardClientCertDetails,
  HttpConnectionManager_SetCurrentClientCertDetailsSchema,
} from "../../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  TcpProxy_WeightedCluster_ClusterWeightSchema,
  TcpProxy_WeightedClusterSchema,
  TcpProxySchema,
} from "../../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { isHttpProtocol, isHttpsTerminating } from "../../../registry/istio/gateway.ts";
import type { MergedPort, MergedServer } from "../../../registry/istio/gateway-merge.ts";
import {
  type L4Route,
  l4Matches,
  matchesServerHosts,
  virtualServicesForGateway,
} from "../../../registry/istio/gateway-routes.ts";
import { destinationCluster } from "../../../registry/istio/vs-routes.ts";
import type { Generated } from "../../types.ts";
import { durationOf } from "../cluster-policy.ts";
import { compareStrings, message } from "../shared.ts";
import { altStatName } from "../sidecar/cluster-common.ts";
import {
  filterChain,
  httpConnectionManagerFilter,
  TCP_PROXY_FILTER_NAME,
  tcpProxyFilter,
  tlsInspectorFilter,
} from "../sidecar/listener-filters.ts";
import { WILDCARD } from "../sidecar/listener-outbound.ts";
import { ALL_ISTIO_MTLS_ALPNS, sniDnatTargets } from "./sni-dnat.ts";
import { serverTransportSocket } from "./tls.ts";
import type { GatewayInputs } from "./types.ts";

/** PILOT_GATEWAY_TRANSPORT_SOCKET_CONNECT_TIMEOUT's default: a slow TLS handshake is cut after 15s. */
const TRANSPORT_SOCKET_CONNECT_TIMEOUT_MS = 15_000;

/** One filter chain before it is built (istiod's filterChainOpts). */
interface ChainOpts {
  sniHosts: readonly string[];
  applicationProtocols?: readonly string[];
  transportSocket?: FilterChain["transportSocket"];
  filters: Filter[];
  /** The chain terminates TLS with an ALPN list (the TLS inspector must read it). */
  alpn: boolean;
}

/** The gateway's Listeners, sorted by name. */
export function gatewayListeners(inputs: GatewayInputs): Generated<typeof ListenerSchema>[] {
  const out: Generated<typeof ListenerSchema>[] = [];
  const seen = new Set<string>();
  for (const mp of inputs.merged.ports) {
    const bind = mp.port.bind || wildcardOf(inputs);
    const name = `${bind}_${mp.port.number}`;
    const chains = chainsFor(mp, name, inputs);
    // Two ports of one name (a TCP and a TLS server on one port and bind) share one listener.
    if (chains.length === 0) continue;
    if (seen.has(name)) {
      const prev = out.find((l) => l.name === name);
      if (prev) prev.message = withChains(prev.message, chains);
      continue;
    }
    seen.add(name);
    out.push({ name, schema: ListenerSchema, message: listener(name, bind, mp.port.number, chains) });
  }
  return out.sort((a, b) => compareStrings(a.name, b.name));
}

/** getWildcardsAndLocalHost: `::` for an IPv6-only proxy, else `0.0.0.0`. */
function wildcardOf(inputs: GatewayInputs): string {
  const ips = inputs.proxy.ipAddresses;
  return ips.length > 0 && ips.every((ip) => ip.includes(":")) ? "::" : WILDCARD;
}

function chainsFor(mp: MergedPort, name: string, inputs: GatewayInputs): ChainOpts[] {
  if (isHttpProtocol(mp.port.protocol)) {
    return [
      { sniHosts: [], filters: [gatewayHcm(altStatName(`outbound_${name}`), mp.routeName)], alpn: false },
    ];
  }
  const out: ChainOpts[] = [];
  for (const m of mp.servers) {
    if (isHttpsTerminating(m.server)) {
      const statPrefix = m.server.name ?? altStatName(`outbound_${name}`);
      const socket = serverTransportSocket(m.server, false);
      out.push({
        sniHosts: m.sniHosts,
        ...(socket && { transportSocket: socket }),
        filters: [gatewayHcm(statPrefix, m.routeName)],
        alpn: socket !== undefined,
      });
      continue;
    }
    out.push(...tcpChains(m, inputs));
  }
  return out;
}

/** createGatewayTCPFilterChainOpts: opaque TCP, TCP terminating TLS, or passthrough by SNI. */
function tcpChains(m: MergedServer, inputs: GatewayInputs): ChainOpts[] {
  const s = m.server;
  const bound = virtualServicesForGateway(
    inputs.virtualServices,
    inputs.proxy.namespace,
    m.gatewayName,
  ).filter((vs) => matchesServerHosts(s.hosts, vs));
  const mode = s.tls?.mode;
  if (mode !== "PASSTHROUGH" && mode !== "AUTO_PASSTHROUGH") {
    for (const vs of bound) {
      const route = vs.tcp.find(
        (r) => r.matches.length === 0 || r.matches.some((x) => l4Matches(x, s.port.number, m.gatewayName)),
      );
      if (!route) continue;
      const filters = networkFilters(route, s.port.number, `${vs.name}.${vs.namespace}`, inputs);
      if (!filters) return [];
      if (!s.tls) return [{ sniHosts: [], filters, alpn: false }];
      const socket = serverTransportSocket(s, true);
      return [
        {
          sniHosts: m.sniHosts,
          ...(socket && { transportSocket: socket }),
          filters,
          alpn: socket !== undefined,
        },
      ];
    }
    return [];
  }
  if (mode === "AUTO_PASSTHROUGH")
    return sniDnatTargets(inputs.services, m.sniHosts).map((t) => ({
      sniHosts: [t.name],
      applicationProtocols: ALL_ISTIO_MTLS_ALPNS,
      filters: [tcpProxyFilter(t.name, t.name)],
      alpn: false,
    }));
  const out: ChainOpts[] = [];
  const known = new Map<string, string>();
  const bind = s.bind ?? "";
  for (const vs of bound) {
    for (const route of vs.tls) {
      for (const match of route.matches) {
        if (!l4Matches(match, s.port.number, m.gatewayName)) continue;
        // CheckDuplicates: a second chain with the same SNI on one port and bind is skipped.
        if (match.sniHosts.some((h) => known.get(h) === bind)) continue;
        for (const h of match.sniHosts) known.set(h, bind);
        const filters = networkFilters(route, s.port.number, `${vs.name}.${vs.namespace}`, inputs);
        if (filters) out.push({ sniHosts: match.sniHosts, filters, alpn: false });
      }
    }
  }
  return out;
}

/**
 * buildOutboundNetworkFilters: one destination ▶ tcp_proxy to its cluster (stats under the
 * cluster's name), several ▶ weighted clusters (stats under `<vs>.<ns>`); undefined without any.
 */
function networkFilters(
  route: L4Route,
  port: number,
  statPrefix: string,
  inputs: GatewayInputs,
): Filter[] | undefined {
  const dests = route.destinations;
  if (dests.length === 0) return undefined;
  const cluster = (d: (typeof dests)[number]) => destinationCluster(d, port, portsOf(inputs, d.host));
  if (dests.length === 1) {
    const c = cluster(dests[0] as (typeof dests)[number]);
    return [tcpProxyFilter(c, c)];
  }
  const proxy = create(TcpProxySchema, {
    statPrefix,
    clusterSpecifier: {
      case: "weightedClusters",
      value: create(TcpProxy_WeightedClusterSchema, {
        clusters: dests.map((d) =>
          create(TcpProxy_WeightedCluster_ClusterWeightSchema, { name: cluster(d), weight: d.weight }),
        ),
      }),
    },
  });
  return [
    create(FilterSchema, {
      name: TCP_PROXY_FILTER_NAME,
      configType: { case: "typedConfig", value: anyPack(TcpProxySchema, proxy) },
    }),
  ];
}

/** The service ports of `host` among the services the gateway sees (a destination without a port takes the only one). */
export function portsOf(inputs: Pick<GatewayInputs, "services">, host: string): number[] | undefined {
  const view = inputs.services.find((v) => v.hostname === host);
  if (!view) return undefined;
  return [...new Set(view.services.flatMap((s) => s.ports.map((p) => p.port)))].sort((a, b) => a - b);
}

/**
 * buildGatewayConnectionManager: the sidecar's connection manager over RDS, with the remote
 * address used, client certificate details sanitized and set (SANITIZE_SET: subject, cert, DNS, URI).
 */
function gatewayHcm(statPrefix: string, route: string): Filter {
  return httpConnectionManagerFilter(statPrefix, route, [], {
    useRemoteAddress: true,
    forwardClientCertDetails: HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET,
    setCurrentClientCertDetails: create(HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
      subject: true,
      cert: true,
      dns: true,
      uri: true,
    }),
    httpProtocolOptions: create(Http1ProtocolOptionsSchema),
  });
}

const connectTimeout = durationOf(TRANSPORT_SOCKET_CONNECT_TIMEOUT_MS);

function buildChain(c: ChainOpts): FilterChain {
  // toFilterChainMatch: server names unless one of them is `*` (which matches every SNI).
  const names = c.sniHosts.includes("*") ? [] : c.sniHosts;
  const chain = filterChain(c.filters, {
    ...((names.length > 0 || c.applicationProtocols) && {
      match: {
        ...(names.length > 0 && { serverNames: names }),
        ...(c.applicationProtocols && { applicationProtocols: c.applicationProtocols }),
      },
    }),
    ...(c.transportSocket && { transportSocket: c.transportSocket }),
  });
  return message(FilterChainSchema, { ...chain, transportSocketConnectTimeout: connectTimeout });
}

function listenerFilters(chains: readonly ChainOpts[]): ListenerFilter[] {
  return chains.some((c) => c.sniHosts.length > 0 || c.alpn) ? [tlsInspectorFilter] : [];
}

function listener(name: string, bind: string, port: number, chains: readonly ChainOpts[]): Listener {
  return message(ListenerSchema, {
    name,
    address: message(AddressSchema, {
      address: {
        case: "socketAddress",
        value: message(SocketAddressSchema, {
          address: bind,
          portSpecifier: { case: "portValue", value: port },
        }),
      },
    }),
    filterChains: chains.map(buildChain),
    listenerFilters: listenerFilters(chains),
    trafficDirection: TrafficDirection.OUTBOUND,
  });
}

function withChains(l: Listener, chains: readonly ChainOpts[]): Listener {
  return message(ListenerSchema, {
    ...l,
    filterChains: [...l.filterChains, ...chains.map(buildChain)],
    listenerFilters: l.listenerFilters.length > 0 ? l.listenerFilters : listenerFilters(chains),
  });
}
