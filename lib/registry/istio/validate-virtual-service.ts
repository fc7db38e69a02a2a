/**
 * VirtualService as istiod's validation webhook checks it (ValidateVirtualService, validateHTTPRoute),
 * first problem only, with the field path from the object: hosts, gateways, exportTo, http routes
 * (matches, destinations and weights, timeout, retries, fault, redirect, direct response, rewrite),
 * and the tcp/tls route destinations. Warnings istiod only logs are not problems here.
 */
import { type Check, child, isObject, quote, typeName } from "../../ingest/check.ts";
import { dns1123Label } from "../../ingest/names.ts";
import { labelMap } from "./common.ts";
import { duration } from "./duration.ts";
import {
  destination,
  eachOf,
  gatewayName,
  has,
  headerName,
  int32,
  nonEmpty,
  type P,
  percentage,
  portNumber,
  stringMatch,
} from "./validate-fields.ts";
import { directResponse, fault, mirror, redirect, retries, rewrite } from "./validate-http-parts.ts";
import { configExportTo, hostMatches, hostOrIp } from "./visibility.ts";

/** Checks a VirtualService object's `spec` (metadata is checked for every kind). */
export const virtualServiceCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  if (!isObject(obj.spec))
    return { field: specPath, message: `must be an object, got ${typeName(obj.spec)}` };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  return spec(obj.spec, specPath, typeof meta.namespace === "string" ? meta.namespace : "");
};

function spec(s: Record<string, unknown>, path: string, namespace: string): P {
  for (const k of ["hosts", "gateways"]) {
    if (!has(s, k)) continue;
    const p = eachOf(s[k], child(path, k), (v, at) =>
      typeof v === "string" ? undefined : { field: at, message: `must be a string, got ${typeName(v)}` },
    );
    if (p) return p;
  }
  const hosts = (s.hosts as string[] | undefined) ?? [];
  const gateways = (s.gateways as string[] | undefined) ?? [];
  const delegate = hosts.length === 0;
  if (delegate) {
    for (const k of ["gateways", "tls", "tcp"])
      if (nonEmpty(s, k))
        return { field: child(path, k), message: `a delegate virtual service (no hosts) must have no ${k}` };
  }
  const p =
    eachOf(gateways, child(path, "gateways"), gatewayName) ??
    vsHosts(hosts, child(path, "hosts"), gateways.length > 0 && !gateways.includes("mesh"));
  if (p) return p;
  if (!nonEmpty(s, "http") && !nonEmpty(s, "tcp") && !nonEmpty(s, "tls"))
    return { field: path, message: "http, tcp or tls must be provided in virtual service" };
  return (
    (has(s, "http")
      ? eachOf(s.http, child(path, "http"), (r, at) => httpRoute(r, at, delegate))
      : undefined) ??
    (has(s, "tcp") ? eachOf(s.tcp, child(path, "tcp"), l4Route("TCP")) : undefined) ??
    (has(s, "tls") ? eachOf(s.tls, child(path, "tls"), l4Route("TLS")) : undefined) ??
    (has(s, "exportTo") ? configExportTo(namespace)(s.exportTo, child(path, "exportTo")) : undefined)
  );
}

function vsHosts(hosts: string[], path: string, gatewayOnly: boolean): P {
  for (let i = 0; i < hosts.length; i++) {
    const at = `${path}[${i}]`;
    const p = hostOrIp(hosts[i], at, true);
    if (p) return p;
    if (!gatewayOnly && hosts[i] === "*")
      return {
        field: at,
        message: "wildcard host * is not allowed for virtual services bound to the mesh gateway",
      };
  }
  for (let i = 0; i < hosts.length; i++)
    for (let j = i + 1; j < hosts.length; j++)
      if (hostMatches(hosts[i] as string, hosts[j] as string))
        return {
          field: `${path}[${j}]`,
          message: `duplicate hosts in virtual service: ${quote(hosts[i])} & ${quote(hosts[j])}`,
        };
  return undefined;
}

function httpRoute(r: unknown, path: string, delegateVs: boolean): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  return (
    conflicts(r, path, delegateVs) ??
    (has(r, "match") ? eachOf(r.match, child(path, "match"), matchRequest) : undefined) ??
    (has(r, "fault") ? fault(r.fault, child(path, "fault")) : undefined) ??
    (has(r, "mirror") ? destination(r.mirror, child(path, "mirror")) : undefined) ??
    (has(r, "mirrors") ? eachOf(r.mirrors, child(path, "mirrors"), mirror) : undefined) ??
    (has(r, "mirrorPercentage")
      ? percentage(r.mirrorPercentage, child(path, "mirrorPercentage"))
      : undefined) ??
    (has(r, "redirect") ? redirect(r.redirect, child(path, "redirect")) : undefined) ??
    (has(r, "directResponse")
      ? directResponse(r.directResponse, child(path, "directResponse"))
      : undefined) ??
    (has(r, "retries") ? retries(r.retries, child(path, "retries")) : undefined) ??
    (has(r, "rewrite") ? rewrite(r.rewrite, child(path, "rewrite")) : undefined) ??
    (has(r, "route") ? routeDestinations(r.route, child(path, "route")) : undefined) ??
    (has(r, "timeout") ? duration(r.timeout, child(path, "timeout")) : undefined)
  );
}

/** validateHTTPRouteConflict: root, delegate and the one-action rule (route, redirect or directResponse). */
function conflicts(r: Record<string, unknown>, path: string, delegateVs: boolean): P {
  const at = (k: string, message: string) => ({ field: child(path, k), message });
  if (!delegateVs && has(r, "delegate")) {
    if (has(r, "redirect"))
      return at("redirect", "a root HTTP route (with delegate) must not specify redirect");
    if (has(r, "route")) return at("route", "a root HTTP route (with delegate) must not specify route");
    return undefined;
  }
  if (delegateVs && has(r, "delegate"))
    return at("delegate", "a delegate HTTP route cannot contain delegate");
  const routes = nonEmpty(r, "route");
  for (const action of ["redirect", "directResponse"]) {
    if (!has(r, action)) continue;
    if (routes) return at("route", `HTTP route cannot contain both route and ${action}`);
    for (const other of ["fault", "rewrite", action === "redirect" ? "directResponse" : "redirect"])
      if (has(r, other)) return at(other, `HTTP route cannot contain both ${other} and ${action}`);
    break;
  }
  if (!routes && !has(r, "redirect") && !has(r, "directResponse"))
    return at("route", "is required: an HTTP route needs a route, a redirect or a directResponse");
  if (has(r, "mirror") && nonEmpty(r, "mirrors"))
    return at("mirrors", "HTTP route cannot contain both mirror and mirrors");
  return undefined;
}

function matchRequest(m: unknown, path: string): P {
  if (!isObject(m)) return { field: path, message: `must be an object, got ${typeName(m)}` };
  for (const k of ["headers", "withoutHeaders", "queryParams"]) {
    if (!has(m, k)) continue;
    const mapPath = child(path, k);
    if (!isObject(m[k])) return { field: mapPath, message: `must be an object, got ${typeName(m[k])}` };
    for (const [name, sm] of Object.entries(m[k] as Record<string, unknown>)) {
      const at = child(mapPath, name);
      if (sm === null) return { field: at, message: "header match cannot be null" };
      const p =
        (k === "queryParams" ? undefined : headerName(name, at)) ??
        (k === "withoutHeaders" && isObject(sm) && sm.regex === "*" ? undefined : stringMatch(sm, at));
      if (p) return p;
    }
  }
  for (const k of ["uri", "scheme", "method", "authority"]) {
    if (!has(m, k)) continue;
    const p = stringMatch(m[k], child(path, k), k === "uri");
    if (p) return p;
  }
  if (has(m, "port") && m.port !== 0) {
    const p = portNumber(m.port, child(path, "port"));
    if (p) return p;
  }
  if (has(m, "sourceLabels")) {
    const p = labelMap(m.sourceLabels, child(path, "sourceLabels"));
    if (p) return p;
  }
  if (has(m, "gateways")) {
    const p = eachOf(m.gateways, child(path, "gateways"), gatewayName);
    if (p) return p;
  }
  if (has(m, "sourceNamespace") && m.sourceNamespace !== "") {
    const ns = m.sourceNamespace;
    if (typeof ns !== "string" || dns1123Label(ns))
      return {
        field: child(path, "sourceNamespace"),
        message: `sourceNamespace match ${quote(ns)} is invalid`,
      };
  }
  return undefined;
}

/** validateHTTPRouteDestinations / validateRouteDestinations: destinations and weights (relative, not all 0). */
function routeDestinations(v: unknown, path: string): P {
  let total = 0;
  const p = eachOf(v, path, (d, at) => {
    if (!isObject(d)) return { field: at, message: `must be an object, got ${typeName(d)}` };
    if (!has(d, "destination"))
      return { field: child(at, "destination"), message: "destination is required" };
    const q = destination(d.destination, child(at, "destination"));
    if (q) return q;
    const w = d.weight ?? 0;
    const wp = int32(w, child(at, "weight"));
    if (wp) return wp;
    if ((w as number) < 0) return { field: child(at, "weight"), message: `weight ${w} < 0` };
    total += w as number;
    return undefined;
  });
  if (p) return p;
  if ((v as unknown[]).length > 1 && total === 0)
    return { field: path, message: "total destination weight = 0" };
  return undefined;
}

const l4Route =
  (kind: "TCP" | "TLS") =>
  (r: unknown, path: string): P => {
    if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
    if (kind === "TLS" && !nonEmpty(r, "match"))
      return { field: child(path, "match"), message: "TLS route must have at least one match condition" };
    if (!nonEmpty(r, "route")) return { field: child(path, "route"), message: `${kind} route is required` };
    return routeDestinations(r.route, child(path, "route"));
  };
