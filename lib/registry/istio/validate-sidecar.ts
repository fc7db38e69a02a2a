/**
 * Sidecar as istiod's validation webhook checks it (ValidateSidecar), with the CRD's bounds, first
 * problem only, with the field path from the object: workloadSelector, a non-empty configuration,
 * ingress listeners (ports, binds, default endpoints, TLS, connection pools), egress listeners
 * (one catch-all, last; unique ports and sockets; `namespace/host` hosts), the inbound connection
 * pool and the outbound traffic policy. Warnings: warnings.ts.
 */
import { type Check, child, isObject, oneOf, quote, typeName } from "../check.ts";
import { istioMetadata, networkingWorkloadSelector } from "./common.ts";
import {
  fqdnProblem,
  goIpFamily,
  isDns1123Label,
  partialWildcardProblem,
  wildcardDomainProblem,
} from "./istio-names.ts";
import { destination, eachOf, has, nonEmpty, type P, portNumber, str, uint32 } from "./validate-fields.ts";
import { sidecarIngressTls } from "./validate-server-tls.ts";
import { protocolName } from "./validate-service-entry.ts";
import { connectionPool } from "./validate-traffic-policy.ts";
import { unixAddress } from "./validate-workload-entry.ts";

/** Checks a Sidecar object's metadata annotations and `spec`. */
export const sidecarCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  const s = obj.spec;
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const p =
    istioMetadata(obj, path) ??
    (has(s, "workloadSelector")
      ? networkingWorkloadSelector(s.workloadSelector, child(specPath, "workloadSelector"))
      : undefined);
  if (p) return p;
  if (
    !nonEmpty(s, "egress") &&
    !nonEmpty(s, "ingress") &&
    !has(s, "outboundTrafficPolicy") &&
    !has(s, "inboundConnectionPool")
  )
    return { field: specPath, message: "sidecar: empty configuration provided" };
  return (
    (has(s, "ingress") ? ingress(s.ingress, child(specPath, "ingress")) : undefined) ??
    (has(s, "inboundConnectionPool")
      ? connectionPool(s.inboundConnectionPool, child(specPath, "inboundConnectionPool"))
      : undefined) ??
    (has(s, "egress") ? egress(s.egress, child(specPath, "egress")) : undefined) ??
    (has(s, "outboundTrafficPolicy")
      ? outbound(s.outboundTrafficPolicy, child(specPath, "outboundTrafficPolicy"))
      : undefined)
  );
};

/** A SidecarPort: name (a DNS label when set), protocol, target port (not for Sidecars), and a number 1-65535 unless `allowZero`. */
function sidecarPort(port: Record<string, unknown>, path: string, allowZero: boolean): P {
  const at = (k: string) => child(path, k);
  const p =
    (has(port, "number") ? uint32(port.number, at("number")) : undefined) ??
    (has(port, "targetPort") ? uint32(port.targetPort, at("targetPort")) : undefined);
  if (p) return p;
  if (((port.targetPort as number | undefined) ?? 0) > 0)
    return { field: at("targetPort"), message: "targetPort has no impact on Sidecars" };
  const name = port.name ?? "";
  if (typeof name !== "string")
    return { field: at("name"), message: `must be a string, got ${typeName(name)}` };
  if (name !== "" && !isDns1123Label(name))
    return { field: at("name"), message: `invalid port name: ${name}` };
  const q = has(port, "protocol") ? protocolName(port.protocol, at("protocol")) : undefined;
  if (q) return q;
  const n = port.number ?? 0;
  return allowZero && n === 0 ? undefined : portNumber(n, at("number"));
}

const captureModes = ["DEFAULT", "IPTABLES", "NONE"];

function captureMode(l: Record<string, unknown>, at: string): P {
  return has(l, "captureMode") ? oneOf(captureModes)(l.captureMode, child(at, "captureMode")) : undefined;
}

function ipBind(l: Record<string, unknown>, at: string): P {
  const bind = str(l, "bind");
  return bind === "" || goIpFamily(bind)
    ? undefined
    : { field: child(at, "bind"), message: `${bind} is not a valid IP` };
}

/** Ingress listeners: a port, an IP bind, a default endpoint, TLS and a connection pool, ports unique. */
function ingress(v: unknown, path: string): P {
  const ports = new Set<unknown>();
  return eachOf(v, path, (l, at) => {
    if (!isObject(l)) return { field: at, message: `must be an object, got ${typeName(l)}` };
    if (!isObject(l.port))
      return { field: child(at, "port"), message: "sidecar: port is required for ingress listeners" };
    const p = sidecarPort(l.port, child(at, "port"), false) ?? ipBind(l, at) ?? captureMode(l, at);
    if (p) return p;
    if (ports.has(l.port.number))
      return {
        field: child(child(at, "port"), "number"),
        message: "sidecar: ports on IP bound listeners must be unique",
      };
    ports.add(l.port.number);
    return (
      defaultEndpoint(l, at) ??
      (has(l, "tls") ? sidecarIngressTls(l.tls, child(at, "tls"), str(l.port, "protocol")) : undefined) ??
      (has(l, "connectionPool") ? connectionPool(l.connectionPool, child(at, "connectionPool")) : undefined)
    );
  });
}

/** The hosts a defaultEndpoint may name (istiod: localhost or any address, either family, or none). */
const endpointHosts = new Set(["", "127.0.0.1", "0.0.0.0", "::1", "::"]);

function defaultEndpoint(l: Record<string, unknown>, at: string): P {
  const e = l.defaultEndpoint;
  if (e === undefined || e === null || e === "") return undefined;
  const path = child(at, "defaultEndpoint");
  if (typeof e !== "string") return { field: path, message: `must be a string, got ${typeName(e)}` };
  if (e.startsWith("unix://")) return unixAddress(e.slice("unix://".length), path);
  const split = splitHostPort(e);
  if (!split) return { field: path, message: `address ${e}: missing port in address` };
  if (!endpointHosts.has(split.host))
    return {
      field: path,
      message:
        "sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset",
    };
  if (!/^[+-]?[0-9]+$/.test(split.port))
    return { field: path, message: `sidecar: defaultEndpoint port (${split.port}) is not a number` };
  return portNumber(Number(split.port), path);
}

/** Go's net.SplitHostPort for the forms a defaultEndpoint takes: `host:port`, `[v6]:port`, `:port`. */
export function splitHostPort(s: string): { host: string; port: string } | undefined {
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0 || s[end + 1] !== ":" || s.slice(1, end).includes("[")) return undefined;
    return { host: s.slice(1, end), port: s.slice(end + 2) };
  }
  const colon = s.lastIndexOf(":");
  if (colon < 0 || s.indexOf(":") !== colon || s.includes("[") || s.includes("]")) return undefined;
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

/** Egress listeners: one catch-all (no port), last; ports and Unix sockets unique; `namespace/host` hosts. */
function egress(v: unknown, path: string): P {
  const ports = new Set<unknown>();
  const sockets = new Set<string>();
  const last = Array.isArray(v) ? v.length - 1 : -1;
  let catchAll = false;
  return eachOf(v, path, (l, at, i) => {
    if (!isObject(l)) return { field: at, message: `must be an object, got ${typeName(l)}` };
    if (!has(l, "port")) {
      if (catchAll)
        return { field: at, message: "sidecar: egress can have only one listener with empty port" };
      if (i !== last)
        return {
          field: at,
          message: "sidecar: the egress listener with empty port should be the last listener in the list",
        };
      catchAll = true;
    } else {
      const portPath = child(at, "port");
      if (!isObject(l.port))
        return { field: portPath, message: `must be an object, got ${typeName(l.port)}` };
      const p = sidecarPort(l.port, portPath, true) ?? captureMode(l, at);
      if (p) return p;
      const bind = str(l, "bind");
      if ((l.port.number ?? 0) === 0) {
        const bp = child(at, "bind");
        if (!bind.startsWith("unix://"))
          return {
            field: bp,
            message: "sidecar: ports with 0 value must have a unix domain socket bind address",
          };
        const u = unixAddress(bind.slice("unix://".length), bp);
        if (u) return u;
        if (has(l, "captureMode") && l.captureMode !== "DEFAULT" && l.captureMode !== "NONE")
          return {
            field: child(at, "captureMode"),
            message: "sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners",
          };
        if (sockets.has(bind))
          return { field: bp, message: "sidecar: unix domain socket values for listeners must be unique" };
        sockets.add(bind);
      } else {
        const q = ipBind(l, at);
        if (q) return q;
        if (ports.has(l.port.number))
          return {
            field: child(portPath, "number"),
            message: "sidecar: ports on IP bound listeners must be unique",
          };
        ports.add(l.port.number);
      }
    }
    if (!nonEmpty(l, "hosts"))
      return {
        field: child(at, "hosts"),
        message: "sidecar: egress listener must contain at least one host",
      };
    return eachOf(l.hosts, child(at, "hosts"), namespaceSlashHost);
  });
}

/** ValidateNamespaceSlashWildcardHostname for sidecars: `<ns>/<host>`, ns `*`, `.`, `~` or a DNS label, the host an FQDN or `*`. */
export function namespaceSlashHost(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const slash = v.indexOf("/");
  if (slash < 0) return { field: path, message: "host must be of form namespace/dnsName" };
  const ns = v.slice(0, slash);
  const name = v.slice(slash + 1);
  if (ns === "" || name === "")
    return { field: path, message: "config namespace and dnsName in host entry cannot be empty" };
  if (ns !== "*" && ns !== "." && ns !== "~" && !isDns1123Label(ns))
    return { field: path, message: `invalid namespace value ${quote(ns)} in sidecar` };
  if (name !== "*" && !name.includes("."))
    return { field: path, message: "short names (non FQDN) are not allowed" };
  const why = wildcardDomainProblem(name) ?? partialWildcardProblem(name);
  return why ? { field: path, message: why } : undefined;
}

/** validateSidecarOutboundTrafficPolicy: an egress proxy only with ALLOW_ANY, an FQDN with a port. */
function outbound(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const mode = v.mode ?? "REGISTRY_ONLY";
  const unknown = oneOf(["REGISTRY_ONLY", "ALLOW_ANY"])(mode, child(path, "mode"));
  if (unknown) return unknown;
  if (!has(v, "egressProxy")) return undefined;
  const at = child(path, "egressProxy");
  if (mode !== "ALLOW_ANY")
    return {
      field: at,
      message: "sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode",
    };
  const e = v.egressProxy;
  if (!isObject(e)) return { field: at, message: `must be an object, got ${typeName(e)}` };
  const why = typeof e.host === "string" ? fqdnProblem(e.host) : "is required";
  if (why) return { field: child(at, "host"), message: why };
  if (!has(e, "port"))
    return { field: child(at, "port"), message: "sidecar: egress_proxy port must be non-nil" };
  return destination(e, at);
}
