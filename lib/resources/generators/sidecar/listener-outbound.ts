/**
 * A sidecar's outbound listeners, as istiod's buildSidecarOutboundListeners builds them for the
 * default (catch-all) egress listener of a proxy captured by iptables
 * (pilot/pkg/networking/core/listener.go buildSidecarOutboundListener, buildListenerFromEntry,
 * buildSidecarOutboundHTTPListenerOpts, mergeTCPFilterChains): one listener per (bind, port),
 * bind_to_port false (virtualOutbound hands connections over by original destination).
 */
import { AddressSchema, SocketAddressSchema } from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { TrafficDirection } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import type {
  FilterChain,
  ListenerFilter,
} from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../../gen/envoy/config/listener/v3/listener_pb.ts";
import type { Protocol } from "../../../model/index.ts";
import { durationOf } from "../cluster-policy.ts";
import { clusterName, compareStrings, listenerName, message } from "../shared.ts";
import { altStatName } from "./cluster-common.ts";
import {
  catchAllCluster,
  filterChain,
  httpConnectionManagerFilter,
  httpInspectorFilter,
  PASSTHROUGH_FILTER_CHAIN,
  PLAINTEXT_HTTP_ALPNS,
  RAW_BUFFER,
  tcpProxyFilter,
  tlsInspectorFilter,
} from "./listener-filters.ts";
import { type OutboundPort, outboundPorts, recordFor, serviceVips } from "./outbound-ports.ts";
import type { SidecarInputs } from "./types.ts";

/** The wildcard bind (IPv4; dual stack is not modelled). */
export const WILDCARD = "0.0.0.0";

/** One outbound listener: its bind and port, HTTP route name, TCP cluster. */
export interface OutboundEntry {
  bind: string;
  port: number;
  /** The RDS name of the HTTP chain (sniffed by ALPN), when the listener takes HTTP. */
  rds?: string;
  /** The cluster of the match-all TCP chain, when a TCP or sniffed service owns the listener. */
  tcpCluster?: string;
  /** The match-all chain's tcp_proxy hashes on the source IP (the service's DestinationRule asks it). */
  tcpHashSourceIp?: boolean;
  /**
   * TLS services without a VIP on the wildcard bind: one chain each, matched by SNI (the hostname),
   * in (port, hostname) order; a second service with the same SNI is dropped (mergeTCPFilterChains).
   */
  sniChains?: { serverName: string; cluster: string; hashSourceIp: boolean }[];
  /** The protocol of the service that made the listener (an HTTP one on 0.0.0.0: sniffed). */
  protocol: Protocol;
}

/**
 * isConflictWithWellKnownPort: Mongo and MySQL are server-first, an inspector waiting for the
 * client's first bytes would stall them, so they share a listener with no other protocol.
 */
function conflictsWithWellKnownPort(incoming: Protocol, existing: Protocol): boolean {
  const wellKnown = (x: Protocol) => x === "Mongo" || x === "MySQL";
  return (wellKnown(incoming) || wellKnown(existing)) && incoming !== existing;
}

/**
 * maybeSetHashPolicy for the service's own cluster (no subset): the DestinationRule's top-level
 * consistentHash.useSourceIp.
 */
function hashesSourceIp(p: OutboundPort): boolean {
  const lb = p.view.destinationRule?.trafficPolicy?.loadBalancer;
  return lb !== undefined && "consistentHash" in lb && lb.consistentHash.useSourceIp === true;
}

/** protocol.IsTLS: HTTPS and TLS ports, whose outbound chain istiod builds from the SNI. */
function isTls(p: OutboundPort): boolean {
  return p.port.protocol === "HTTPS" || p.port.protocol === "TLS";
}

/** getListenerName: `<bind>_<port>`. */
export function outboundListenerName(bind: string, port: number): string {
  return `${bind}_${port}`;
}

/**
 * The outbound listeners, sorted by name. Per service port in (port, hostname) order, as istiod
 * resolves conflicts on one (bind, port): HTTP binds 0.0.0.0 and shares RDS `<port>`; TCP binds the
 * VIP (0.0.0.0 for a headless service) with tcp_proxy to `outbound|<port>||<host>`, a second
 * match-all TCP chain on the same bind is dropped (TCPOverTCP); a sniffed port binds like TCP and
 * gets both chains, its RDS `<host>:<port>` on a VIP and `<port>` on 0.0.0.0; HTTP and TCP on one
 * bind merge (HTTPOverTCP, TCPOverHTTP, AutoOverTCP); a sniffed port over HTTP replaces it
 * (AutoOverHTTP). Mongo and MySQL share a listener with no other protocol (the later service is
 * left out, isConflictWithWellKnownPort). Alias services get none, UDP ports none.
 */
export function outboundListeners(inputs: SidecarInputs): Listener[] {
  return outboundEntries(inputs)
    .map((e) => buildListener(e, inputs))
    .sort((a, b) => compareStrings(a.name, b.name));
}

/**
 * The outbound listeners as plain entries (outboundListeners' conflict rules applied), in
 * (port, hostname) order of their first service: the RDS names they take are exactly the
 * RouteConfigurations the route side builds.
 */
export function outboundEntries(inputs: SidecarInputs): OutboundEntry[] {
  const entries = new Map<string, OutboundEntry>();
  for (const p of outboundPorts(inputs.services)) {
    if (recordFor(p.view, inputs)?.resolution === "Alias") continue;
    addPort(entries, p, inputs);
  }
  return [...entries.values()];
}

function addPort(entries: Map<string, OutboundEntry>, p: OutboundPort, inputs: SidecarInputs): void {
  const port = p.port.port;
  const bind = p.kind === "http" ? WILDCARD : (serviceVips(p.view, inputs)[0] ?? WILDCARD);
  const key = outboundListenerName(bind, port);
  const cur = entries.get(key);
  const cluster = clusterName(p.view.hostname, port);
  if (cur && conflictsWithWellKnownPort(p.port.protocol, cur.protocol)) return;
  const protocol = p.kind === "http" ? "UnsupportedProtocol" : p.port.protocol;
  const hash = hashesSourceIp(p);
  if (p.kind === "http") {
    if (!cur) entries.set(key, { bind, port, rds: String(port), protocol });
    else if (cur.rds === undefined) cur.rds = String(port); // HTTPOverTCP: merged, sniffed
    return;
  }
  if (p.kind === "tcp" && isTls(p) && bind === WILDCARD) {
    // buildSidecarOutboundTLSFilterChainOpts without a VIP: the chain matches the hostname as SNI
    // (a match-all chain would send every TLS connection on the port to this one service).
    const chain = { serverName: p.view.hostname, cluster, hashSourceIp: hash };
    if (!cur) entries.set(key, { bind, port, sniChains: [chain], protocol });
    else if (!cur.sniChains?.some((c) => c.serverName === chain.serverName))
      cur.sniChains = [...(cur.sniChains ?? []), chain];
    return;
  }
  if (p.kind === "tcp") {
    if (!cur) entries.set(key, { bind, port, tcpCluster: cluster, tcpHashSourceIp: hash, protocol });
    else if (cur.tcpCluster === undefined) {
      cur.tcpCluster = cluster;
      cur.tcpHashSourceIp = hash;
    } // TCPOverHTTP; TCPOverTCP keeps the first
    return;
  }
  const rds = bind === WILDCARD ? String(port) : listenerName(p.view.hostname, port);
  const entry = { bind, port, rds, tcpCluster: cluster, tcpHashSourceIp: hash, protocol };
  if (!cur) entries.set(key, entry);
  else if (cur.tcpCluster === undefined)
    entries.set(key, entry); // AutoOverHTTP
  else if (cur.rds === undefined) cur.rds = rds; // AutoOverTCP: the existing match-all TCP chain stays
}

const zero = durationOf(0);

/**
 * buildListenerFromEntry: the HTTP chain (ALPN http/1.1, h2c over raw_buffer) and the SNI chains in
 * filter_chains, the match-all TCP chain as default_filter_chain, or alone in filter_chains when
 * there is no other chain; without a TCP chain the default is the PassthroughFilterChain (tcp_proxy
 * to Passthrough or BlackHole). Only the inspectors a chain needs: the TLS inspector for SNI chains,
 * the HTTP inspector for the HTTP chain (istiod adds no TLS inspector for plaintext ALPN matches).
 * The HCM's stats are `outbound_<listener>;` (util.DelimitedStatsPrefix, as the clusters'
 * alt_stat_name). listener_filters_timeout 0s (the mesh's
 * protocolDetectionTimeout default).
 */
function buildListener(e: OutboundEntry, inputs: SidecarInputs): Listener {
  const name = outboundListenerName(e.bind, e.port);
  const tcp =
    e.tcpCluster !== undefined
      ? filterChain([tcpProxyFilter(e.tcpCluster, e.tcpCluster, e.tcpHashSourceIp === true)])
      : undefined;
  const chains: FilterChain[] = [];
  const listenerFilters: ListenerFilter[] = [];
  if (e.rds !== undefined)
    chains.push(
      filterChain([httpConnectionManagerFilter(altStatName(`outbound_${name}`), e.rds)], {
        match: { transportProtocol: RAW_BUFFER, applicationProtocols: PLAINTEXT_HTTP_ALPNS },
      }),
    );
  for (const c of e.sniChains ?? [])
    chains.push(
      filterChain([tcpProxyFilter(c.cluster, c.cluster, c.hashSourceIp)], {
        match: { serverNames: [c.serverName] },
      }),
    );
  if (e.sniChains?.length) listenerFilters.push(tlsInspectorFilter);
  if (e.rds !== undefined) listenerFilters.push(httpInspectorFilter);
  let defaultChain: FilterChain | undefined;
  if (chains.length === 0) {
    if (tcp) chains.push(tcp);
  } else {
    defaultChain =
      tcp ??
      filterChain([tcpProxyFilter(catchAllCluster(inputs.mesh.outboundTrafficPolicy))], {
        name: PASSTHROUGH_FILTER_CHAIN,
        match: {},
      });
  }
  return message(ListenerSchema, {
    name,
    address: message(AddressSchema, {
      address: {
        case: "socketAddress",
        value: message(SocketAddressSchema, {
          address: e.bind,
          portSpecifier: { case: "portValue", value: e.port },
        }),
      },
    }),
    filterChains: chains,
    ...(defaultChain && { defaultFilterChain: defaultChain }),
    listenerFilters,
    listenerFiltersTimeout: zero,
    continueOnListenerFiltersTimeout: true,
    trafficDirection: TrafficDirection.OUTBOUND,
    bindToPort: false,
  });
}
