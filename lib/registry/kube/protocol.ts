/**
 * Port protocol selection as Istio does it for Kubernetes services
 * (istio pkg/config/kube/conversion.go ConvertProtocol and pkg/config/protocol Parse).
 */
import type { Protocol } from "../../model/index.ts";
import type { KubeProtocol } from "./types.ts";

/**
 * Istio's protocol.Parse: a protocol name, case-insensitive, to a Protocol; anything else is
 * UnsupportedProtocol (which Istio treats as "detect it": protocol sniffing).
 */
export function parseProtocol(name: string): Protocol {
  return protocolNames.get(name.toLowerCase()) ?? "UnsupportedProtocol";
}

// Maps, not object literals: a port named "constructor" must not find Object.prototype.
const protocolNames: ReadonlyMap<string, Protocol> = new Map([
  ["tcp", "TCP"],
  ["udp", "UDP"],
  ["grpc", "GRPC"],
  ["grpc-web", "GRPC-Web"],
  ["http", "HTTP"],
  ["http_proxy", "HTTP_PROXY"],
  ["http2", "HTTP2"],
  ["https", "HTTPS"],
  ["tls", "TLS"],
  ["mongo", "Mongo"],
  ["redis", "Redis"],
  ["mysql", "MySQL"],
]);

/**
 * The Kubernetes-defined appProtocol values (KEP-3726). Matched exactly, and only in
 * appProtocol: a port name cannot contain "/".
 */
const kubernetesAppProtocols: ReadonlyMap<string, Protocol> = new Map([
  // HTTP/2 over cleartext, which is what Istio's HTTP2 means.
  ["kubernetes.io/h2c", "HTTP2"],
  // WebSocket over cleartext is HTTP/1.1 with an upgrade.
  ["kubernetes.io/ws", "HTTP"],
  // WebSocket over TLS: opaque TLS to the sidecar.
  ["kubernetes.io/wss", "HTTPS"],
]);

/**
 * Ports that are never sniffed: a server-first protocol on them would hang waiting for the
 * client to speak. Unnamed ports here are plain TCP.
 */
const wellKnownTcpPorts: ReadonlySet<number> = new Set([
  25, // SMTP
  53, // DNS
  3306, // MySQL
  27017, // MongoDB
]);

const GRPC_WEB = "grpc-web";

/** The fields of a Service or EndpointSlice port that decide its protocol. */
export interface PortProtocolInput {
  port?: number;
  name?: string;
  protocol?: KubeProtocol;
  appProtocol?: string;
}

/**
 * The protocol Istio gives a Kubernetes port: `protocol: UDP` ▶ UDP; else appProtocol when set
 * (the Kubernetes-defined names first), else the port name; a leading `grpc-web` wins over the
 * prefix rule; otherwise the part before the first "-" is parsed case-insensitively. Unknown ▶
 * UnsupportedProtocol (auto-detect), except on well-known server-first ports, which are TCP.
 */
export function convertProtocol(p: PortProtocolInput): Protocol {
  if (p.protocol === "UDP") return "UDP";

  let name = p.name ?? "";
  if (p.appProtocol !== undefined) {
    const standard = kubernetesAppProtocols.get(p.appProtocol);
    if (standard) return standard;
    name = p.appProtocol;
  }

  if (name.length >= GRPC_WEB.length && name.slice(0, GRPC_WEB.length).toLowerCase() === GRPC_WEB) {
    return "GRPC-Web";
  }

  const dash = name.indexOf("-");
  const prefix = dash >= 0 ? name.slice(0, dash) : name;
  const parsed = parseProtocol(prefix);
  if (parsed === "UnsupportedProtocol" && p.port !== undefined && wellKnownTcpPorts.has(p.port)) {
    return "TCP";
  }
  return parsed;
}
