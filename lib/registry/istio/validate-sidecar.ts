/**
 * Sidecar as istiod's validation webhook checks it (ValidateSidecar), first problem only, with the
 * field path from the object: workloadSelector labels, a non-empty configuration, ingress ports,
 * egress listeners (one catch-all, last; unique ports; `namespace/host` hosts) and the outbound
 * traffic policy.
 */
import { type Check, child, isObject, quote, typeName } from "../../ingest/check.ts";
import { parseIp } from "../../ingest/ip.ts";
import { dns1123Label } from "../../ingest/names.ts";
import { labelMap } from "./common.ts";
import { eachOf, has, nonEmpty, type P, portNumber } from "./validate-fields.ts";
import { protocolName } from "./validate-service-entry.ts";
import { hostOrIp } from "./visibility.ts";

/** Checks a Sidecar object's `spec` (metadata is checked for every kind). */
export const sidecarCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  const s = obj.spec;
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  if (has(s, "workloadSelector")) {
    const at = child(specPath, "workloadSelector");
    const ws = s.workloadSelector;
    if (!isObject(ws)) return { field: at, message: `must be an object, got ${typeName(ws)}` };
    const p = has(ws, "labels") ? labelMap(ws.labels, child(at, "labels")) : undefined;
    if (p) return p;
  }
  if (
    !nonEmpty(s, "egress") &&
    !nonEmpty(s, "ingress") &&
    !has(s, "outboundTrafficPolicy") &&
    !has(s, "inboundConnectionPool")
  )
    return { field: specPath, message: "sidecar: empty configuration provided" };
  return (
    (has(s, "ingress") ? ingress(s.ingress, child(specPath, "ingress")) : undefined) ??
    (has(s, "egress") ? egress(s.egress, child(specPath, "egress")) : undefined) ??
    (has(s, "outboundTrafficPolicy")
      ? outbound(s.outboundTrafficPolicy, child(specPath, "outboundTrafficPolicy"))
      : undefined)
  );
};

/**
 * The ingress listeners as ValidateSidecar checks them (validateSidecarIngressPortAndBind and the
 * defaultEndpoint rules): a port (name a DNS label when set, protocol one protocol.Parse knows,
 * number 1-65535, unique), `bind` an IP when set, captureMode DEFAULT/IPTABLES/NONE, defaultEndpoint
 * `unix://<absolute path or @name>` or `<host>:<port>` with host "", 127.0.0.1, 0.0.0.0, ::1 or ::.
 */
function ingress(v: unknown, path: string): P {
  const ports = new Set<number>();
  return eachOf(v, path, (l, at) => {
    if (!isObject(l)) return { field: at, message: `must be an object, got ${typeName(l)}` };
    const portPath = child(at, "port");
    if (!isObject(l.port))
      return { field: portPath, message: "sidecar: port is required for ingress listeners" };
    const port = l.port;
    if (has(port, "name") && port.name !== "") {
      const namePath = child(portPath, "name");
      if (typeof port.name !== "string")
        return { field: namePath, message: `must be a string, got ${typeName(port.name)}` };
      const why = dns1123Label(port.name);
      if (why) return { field: namePath, message: `port name ${quote(port.name)} ${why}` };
    }
    if (has(port, "protocol")) {
      const protocolPath = child(portPath, "protocol");
      if (typeof port.protocol !== "string")
        return { field: protocolPath, message: `must be a string, got ${typeName(port.protocol)}` };
      const p = protocolName(port.protocol, protocolPath);
      if (p) return p;
    }
    const numberPath = child(portPath, "number");
    const p = portNumber(port.number ?? 0, numberPath);
    if (p) return p;
    if (ports.has(port.number as number))
      return { field: numberPath, message: "sidecar: ports on IP bound listeners must be unique" };
    ports.add(port.number as number);
    return bind(l, at) ?? captureMode(l, at) ?? defaultEndpoint(l, at);
  });
}

function bind(l: Record<string, unknown>, at: string): P {
  if (!has(l, "bind") || l.bind === "") return undefined;
  const path = child(at, "bind");
  if (typeof l.bind !== "string")
    return { field: path, message: `must be a string, got ${typeName(l.bind)}` };
  const ip = parseIp(l.bind);
  return ip.ok ? undefined : { field: path, message: `${quote(l.bind)} is not a valid IP: ${ip.reason}` };
}

const captureModes = ["DEFAULT", "IPTABLES", "NONE"];

function captureMode(l: Record<string, unknown>, at: string): P {
  if (!has(l, "captureMode") || captureModes.includes(l.captureMode as string)) return undefined;
  return {
    field: child(at, "captureMode"),
    message: `unsupported value ${quote(l.captureMode)}; want one of ${captureModes.join(", ")}`,
  };
}

/** The hosts a defaultEndpoint may name (istiod: localhost or the pod IP, either family, or none). */
const endpointHosts = new Set(["", "127.0.0.1", "0.0.0.0", "::1", "::"]);

function defaultEndpoint(l: Record<string, unknown>, at: string): P {
  if (!has(l, "defaultEndpoint") || l.defaultEndpoint === "") return undefined;
  const path = child(at, "defaultEndpoint");
  const e = l.defaultEndpoint;
  if (typeof e !== "string") return { field: path, message: `must be a string, got ${typeName(e)}` };
  if (e.startsWith("unix://")) return unixAddress(e.slice("unix://".length), path);
  const split = splitHostPort(e);
  if (!split || !endpointHosts.has(split.host))
    return {
      field: path,
      message: `${quote(e)}: sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset`,
    };
  if (!/^[0-9]+$/.test(split.port))
    return { field: path, message: `sidecar: defaultEndpoint port (${quote(split.port)}) is not a number` };
  const n = Number(split.port);
  if (n < 1 || n > 65535)
    return { field: path, message: `sidecar: defaultEndpoint port ${n} must be in the range 1..65535` };
  return undefined;
}

/** Go's net.SplitHostPort for the forms a defaultEndpoint takes: `host:port`, `[v6]:port`, `:port`. */
export function splitHostPort(s: string): { host: string; port: string } | undefined {
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0 || s[end + 1] !== ":") return undefined;
    return { host: s.slice(1, end), port: s.slice(end + 2) };
  }
  const colon = s.lastIndexOf(":");
  if (colon < 0 || s.indexOf(":") !== colon) return undefined;
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

/** ValidateUnixAddress: an abstract name (`@…`) or an absolute path to a file. */
function unixAddress(addr: string, path: string): P {
  if (addr === "") return { field: path, message: "unix address must not be empty" };
  if (addr.startsWith("@")) return undefined;
  if (!addr.startsWith("/") || addr.endsWith("/"))
    return { field: path, message: `${quote(addr)} is not an absolute path to a file` };
  return undefined;
}

function egress(v: unknown, path: string): P {
  const ports = new Set<number>();
  const list = Array.isArray(v) ? v : [];
  let catchAll = false;
  return eachOf(v, path, (l, at, i) => {
    if (!isObject(l)) return { field: at, message: `must be an object, got ${typeName(l)}` };
    if (!has(l, "port")) {
      if (catchAll)
        return { field: at, message: "sidecar: egress can have only one listener with empty port" };
      if (i !== list.length - 1)
        return {
          field: at,
          message: "sidecar: the egress listener with empty port should be the last listener in the list",
        };
      catchAll = true;
    } else {
      const portPath = child(at, "port");
      if (!isObject(l.port))
        return { field: portPath, message: `must be an object, got ${typeName(l.port)}` };
      const n = l.port.number ?? 0;
      const bind = typeof l.bind === "string" ? l.bind : "";
      if (n === 0) {
        if (!bind.startsWith("unix://"))
          return {
            field: child(at, "bind"),
            message: "sidecar: ports with 0 value must have a unix domain socket bind address",
          };
      } else {
        const p = portNumber(n, child(portPath, "number"));
        if (p) return p;
        if (ports.has(n as number))
          return {
            field: child(portPath, "number"),
            message: "sidecar: ports on IP bound listeners must be unique",
          };
        ports.add(n as number);
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

/** ValidateNamespaceSlashWildcardHostname for sidecars: `<ns>/<host>`, ns `*`, `.`, `~` or a DNS label. */
export function namespaceSlashHost(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const slash = v.indexOf("/");
  if (slash < 0) return { field: path, message: `host ${quote(v)} must be of form namespace/dnsName` };
  const ns = v.slice(0, slash);
  const name = v.slice(slash + 1);
  if (ns === "" || name === "")
    return { field: path, message: "config namespace and dnsName in host entry cannot be empty" };
  if (ns !== "*" && ns !== "." && ns !== "~" && dns1123Label(ns))
    return { field: path, message: `invalid namespace value ${quote(ns)} in sidecar` };
  return hostOrIp(name, path, false);
}

function outbound(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const mode = v.mode ?? "REGISTRY_ONLY";
  if (mode !== "REGISTRY_ONLY" && mode !== "ALLOW_ANY")
    return {
      field: child(path, "mode"),
      message: `unsupported value ${quote(mode)}; want one of REGISTRY_ONLY, ALLOW_ANY`,
    };
  if (has(v, "egressProxy") && mode !== "ALLOW_ANY")
    return {
      field: child(path, "egressProxy"),
      message: "sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode",
    };
  return undefined;
}
