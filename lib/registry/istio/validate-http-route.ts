/**
 * One HTTP route of a VirtualService as istiod checks it (validateHTTPRoute and its parts,
 * validateHTTPRouteConflict, validateHTTPRouteMatchRequest, validateHTTPRouteDestinations), with
 * the CRD's bounds: first problem only, with its field path.
 */
import { child, isObject, quote, typeName } from "../check.ts";
import { labelMap } from "./common.ts";
import { duration } from "./duration.ts";
import { isDns1123Label } from "./istio-names.ts";
import {
  destination,
  eachOf,
  gatewayNames,
  has,
  int32,
  matchPort,
  nonEmpty,
  type P,
  stringMatch,
  uint32,
} from "./validate-fields.ts";
import { authorityRewrite, headerOperations, isJwtClaimRoute, matchHeaderName } from "./validate-headers.ts";
import {
  corsPolicy,
  directResponse,
  fault,
  mirrorPercentage,
  mirrors,
  redirect,
  retries,
  rewrite,
} from "./validate-http-parts.ts";

/** Where a route is: in a delegate VirtualService (no hosts), and whether the VirtualService applies to a gateway only. */
export interface RouteContext {
  delegateVs: boolean;
  /** Bound only to gateways (not the mesh): JWT claim routes are allowed. */
  gatewayOnly: boolean;
  gateways: readonly string[];
}

/** validateHTTPRoute. */
export function httpRoute(r: unknown, path: string, ctx: RouteContext): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  const at = (k: string) => child(path, k);
  return (
    conflicts(r, path, ctx.delegateVs) ??
    (has(r, "match") ? eachOf(r.match, at("match"), (m, mp) => matchRequest(m, mp, ctx)) : undefined) ??
    (has(r, "headers") ? headerOperations(r.headers, at("headers")) : undefined) ??
    (has(r, "corsPolicy") ? corsPolicy(r.corsPolicy, at("corsPolicy")) : undefined) ??
    (has(r, "fault") ? fault(r.fault, at("fault")) : undefined) ??
    (has(r, "mirrorPercent") ? mirrorPercent(r.mirrorPercent, at("mirrorPercent")) : undefined) ??
    (has(r, "mirrorPercentage") ? mirrorPercentage(r.mirrorPercentage, at("mirrorPercentage")) : undefined) ??
    (has(r, "mirror") ? destination(r.mirror, at("mirror")) : undefined) ??
    (has(r, "mirrors") ? mirrors(r.mirrors, at("mirrors")) : undefined) ??
    (has(r, "redirect") ? redirect(r.redirect, at("redirect")) : undefined) ??
    (has(r, "directResponse") ? directResponse(r.directResponse, at("directResponse")) : undefined) ??
    (has(r, "retries") ? retries(r.retries, at("retries")) : undefined) ??
    (has(r, "rewrite") ? rewrite(r.rewrite, at("rewrite")) : undefined) ??
    authorityRewrite(r, path) ??
    (has(r, "route") ? routeDestinations(r.route, at("route"), true) : undefined) ??
    (has(r, "timeout") ? duration(r.timeout, at("timeout")) : undefined)
  );
}

function mirrorPercent(v: unknown, path: string): P {
  return (
    uint32(v, path) ??
    ((v as number) > 100
      ? { field: path, message: `mirror_percent must have a max value of 100 (it has ${v})` }
      : undefined)
  );
}

/** validateHTTPRouteConflict: a root route only delegates; otherwise one of route, redirect, directResponse. */
function conflicts(r: Record<string, unknown>, path: string, delegateVs: boolean): P {
  const at = (k: string, message: string) => ({ field: child(path, k), message });
  const name = typeof r.name === "string" ? r.name : "";
  if (!delegateVs && has(r, "delegate")) {
    if (has(r, "redirect")) return at("redirect", `root HTTP route ${name} must not specify redirect`);
    if (nonEmpty(r, "route")) return at("route", `root HTTP route ${name} must not specify route`);
    return undefined;
  }
  if (delegateVs && has(r, "delegate")) return at("delegate", "delegate HTTP route cannot contain delegate");
  const routes = nonEmpty(r, "route");
  const [action, other] = has(r, "redirect")
    ? (["redirect", "directResponse"] as const)
    : has(r, "directResponse")
      ? (["directResponse", "redirect"] as const)
      : [undefined, undefined];
  if (action) {
    const words = action === "redirect" ? "redirect" : "direct_response";
    if (routes) return at("route", `HTTP route cannot contain both route and ${words}`);
    if (has(r, "fault")) return at("fault", `HTTP route cannot contain both fault and ${words}`);
    if (has(r, "rewrite")) return at("rewrite", `HTTP route rule cannot contain both rewrite and ${words}`);
    if (has(r, other)) return at(other, "HTTP route rule cannot contain both direct_response and redirect");
  } else if (!routes) return at("route", "HTTP route, redirect or direct_response is required");
  if (has(r, "mirror") && nonEmpty(r, "mirrors"))
    return at("mirrors", "HTTP route cannot contain both mirror and mirrors");
  return undefined;
}

/** One HTTPMatchRequest (validateHTTPRouteMatchRequest, and JWT claim routes outside gateways). */
function matchRequest(m: unknown, path: string, ctx: RouteContext): P {
  if (!isObject(m)) return { field: path, message: `must be an object, got ${typeName(m)}` };
  for (const k of ["headers", "withoutHeaders", "queryParams"] as const) {
    if (!has(m, k)) continue;
    const mapPath = child(path, k);
    if (!isObject(m[k])) return { field: mapPath, message: `must be an object, got ${typeName(m[k])}` };
    for (const [name, sm] of Object.entries(m[k] as Record<string, unknown>)) {
      const at = child(mapPath, name);
      if (k !== "queryParams") {
        if (k === "headers" && sm === null)
          return { field: at, message: `header match ${name} cannot be null` };
        const p = matchHeaderName(name, at);
        if (p) return p;
        if (!ctx.gatewayOnly && isJwtClaimRoute(name))
          return {
            field: at,
            message: `JWT claim based routing (key: ${name}) is only supported for gateway, found no gateways: [${ctx.gateways.join(" ")}]`,
          };
      }
      if (sm === null || (k === "withoutHeaders" && isObject(sm) && sm.regex === "*")) continue;
      const p = stringMatch(sm, at, k);
      if (p) return p;
    }
  }
  for (const k of ["uri", "scheme", "method", "authority"] as const) {
    if (!has(m, k)) continue;
    const p = stringMatch(m[k], child(path, k), k, k === "uri");
    if (p) return p;
  }
  const port = matchPort(m, path);
  if (port) return port;
  const q =
    (has(m, "sourceLabels") ? labelMap(m.sourceLabels, child(path, "sourceLabels")) : undefined) ??
    (has(m, "gateways") ? gatewayNames(m.gateways, child(path, "gateways")) : undefined);
  if (q) return q;
  const ns = m.sourceNamespace;
  if (has(m, "sourceNamespace") && ns !== "" && (typeof ns !== "string" || !isDns1123Label(ns)))
    return {
      field: child(path, "sourceNamespace"),
      message: `sourceNamespace match ${quote(ns)} is invalid`,
    };
  return undefined;
}

/**
 * validateHTTPRouteDestinations / validateRouteDestinations: each a destination (and, for HTTP,
 * header operations), weights not negative and not all 0 when there are several.
 */
export function routeDestinations(v: unknown, path: string, http: boolean): P {
  let total = 0;
  const p = eachOf(v, path, (d, at) => {
    if (!isObject(d)) return { field: at, message: `must be an object, got ${typeName(d)}` };
    if (!has(d, "destination"))
      return { field: child(at, "destination"), message: "destination is required" };
    const q =
      (http && has(d, "headers") ? headerOperations(d.headers, child(at, "headers")) : undefined) ??
      destination(d.destination, child(at, "destination"));
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
