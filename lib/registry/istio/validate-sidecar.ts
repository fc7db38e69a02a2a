/**
 * Sidecar as istiod's validation webhook checks it (ValidateSidecar), first problem only, with the
 * field path from the object: workloadSelector labels, a non-empty configuration, ingress ports,
 * egress listeners (one catch-all, last; unique ports; `namespace/host` hosts) and the outbound
 * traffic policy.
 */
import { type Check, child, isObject, quote, typeName } from "../../ingest/check.ts";
import { dns1123Label } from "../../ingest/names.ts";
import { labelMap } from "./common.ts";
import { eachOf, has, nonEmpty, type P, portNumber } from "./validate-fields.ts";
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

function ingress(v: unknown, path: string): P {
  const ports = new Set<number>();
  return eachOf(v, path, (l, at) => {
    if (!isObject(l)) return { field: at, message: `must be an object, got ${typeName(l)}` };
    if (!isObject(l.port))
      return { field: child(at, "port"), message: "sidecar: port is required for ingress listeners" };
    const numberPath = child(child(at, "port"), "number");
    const p = portNumber(l.port.number ?? 0, numberPath);
    if (p) return p;
    if (ports.has(l.port.number as number))
      return { field: numberPath, message: "sidecar: ports on IP bound listeners must be unique" };
    ports.add(l.port.number as number);
    return undefined;
  });
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
