/**
 * How a sidecar's outbound side is laid out per service port, as istiod decides it
 * (pilot/pkg/networking/core/listener.go buildSidecarOutboundListener; pkg/config/protocol):
 * HTTP-family ports share listener `0.0.0.0_<port>` and RouteConfiguration `<port>`, TCP-family
 * ports get `<VIP>_<port>` with tcp_proxy, ports of unknown protocol are sniffed. The cluster
 * names listeners and routes use come from the cluster side (cluster.ts, cluster-common.ts).
 */
import type { Protocol, Service, ServicePort } from "../../../model/index.ts";
import type { ServiceView } from "../../types.ts";
import { compareStrings, mergedPorts, sortedServices } from "../shared.ts";
import type { SidecarInputs } from "./types.ts";

/** How a port is served outbound: HTTP (RDS), TCP (tcp_proxy), or sniffed (both chains). */
export type PortKind = "http" | "tcp" | "sniffed";

/**
 * protocol.IsHTTP (HTTP, HTTP2, GRPC, GRPC-Web, HTTP_PROXY) ▶ http; UnsupportedProtocol (a port
 * whose name and appProtocol say nothing) ▶ sniffed; UDP ▶ none (istiod builds no listener);
 * every other (TCP, TLS, HTTPS, Mongo, MySQL, Redis) ▶ tcp.
 */
export function portKind(p: Protocol): PortKind | undefined {
  switch (p) {
    case "HTTP":
    case "HTTP2":
    case "GRPC":
    case "GRPC-Web":
    case "HTTP_PROXY":
      return "http";
    case "UnsupportedProtocol":
      return "sniffed";
    case "UDP":
      return undefined;
    default:
      return "tcp";
  }
}

/** One service port a sidecar sees outbound. */
export interface OutboundPort {
  view: ServiceView;
  port: ServicePort;
  kind: PortKind;
}

/**
 * Every visible service's merged ports with their kind, by port number then hostname (the order the
 * generators emit in, the same for equal inputs on every runtime); UDP ports left out.
 */
export function outboundPorts(services: readonly ServiceView[]): OutboundPort[] {
  const out: OutboundPort[] = [];
  for (const view of services)
    for (const port of mergedPorts(view)) {
      const kind = portKind(port.protocol);
      if (kind) out.push({ view, port, kind });
    }
  return out.sort((a, b) => a.port.port - b.port.port || compareStrings(a.view.hostname, b.view.hostname));
}

/**
 * The record the proxy sees of a service (GetAddressForProxy): its own cluster's, else the first
 * in clusterId order; undefined when the service has no record.
 */
export function recordFor(view: ServiceView, inputs: SidecarInputs): Service | undefined {
  const sorted = sortedServices(view);
  const own = inputs.proxy.metadata.clusterId;
  return sorted.find((s) => s.clusterId === own) ?? sorted[0];
}

/** The service's VIPs for the proxy (sorted), without `0.0.0.0`; empty for a headless service. */
export function serviceVips(view: ServiceView, inputs: SidecarInputs): string[] {
  const rec = recordFor(view, inputs);
  return [...(rec?.addresses ?? [])].filter((a) => a !== "" && a !== "0.0.0.0").sort();
}
