/**
 * Gateway API matches ▶ Istio HTTPMatchRequests (istiod's createURIMatch, createGRPCURIMatch,
 * createHeadersMatch, createQueryParamsMatch), and the order istiod sorts the resulting routes in
 * (sortHTTPRoutes), so one VirtualService carries the Gateway API's precedence.
 */

import type { GrpcMatch, HttpMatch } from "./types.ts";

/** A route error as istiod's ConfigError: the reason and message of a ResolvedRefs condition. */
export interface ConfigError {
  reason: string;
  message: string;
}

/** An Istio HTTPRoute as JSON (the VirtualService spec's `http` entries). */
export type IstioHttpRoute = Record<string, unknown> & { name?: string; match?: Record<string, unknown>[] };

function stringMatch(type: string | undefined, value: string): Record<string, string> {
  return type === "RegularExpression" ? { regex: value } : { exact: value };
}

/** Header and query parameter matches: Exact (default) or RegularExpression, by name. */
export function valueMatches(list: { type?: string; name: string; value: string }[] | undefined) {
  if (!list || list.length === 0) return undefined;
  return Object.fromEntries(list.map((m) => [m.name, stringMatch(m.type, m.value)]));
}

/** createURIMatch: PathPrefix (default, a trailing `/` ignored), Exact, RegularExpression. */
export function uriMatch(path: HttpMatch["path"]): Record<string, string> {
  const type = path?.type ?? "PathPrefix";
  let value = path?.value ?? "/";
  if (type === "Exact") return { exact: value };
  if (type === "RegularExpression") return { regex: value };
  // "When specified, a trailing `/` is ignored."
  if (value !== "/" && value.endsWith("/")) value = value.slice(0, -1);
  return { prefix: value };
}

/** createGRPCURIMatch: gRPC's `/<service>/<method>` as a path match. */
export function grpcUriMatch(m: GrpcMatch["method"]): { uri?: Record<string, string>; error?: ConfigError } {
  if (!m) return {};
  if (m.method === undefined && m.service === undefined)
    return {
      error: { reason: "InvalidConfiguration", message: "gRPC match must have method or service defined" },
    };
  const regex = m.type === "RegularExpression";
  if (m.method === undefined)
    return { uri: regex ? { regex: `/${m.service}/.+` } : { prefix: `/${m.service}/` } };
  if (m.service === undefined) return { uri: { regex: `/[^/]+/${m.method}` } };
  return { uri: regex ? { regex: `/${m.service}/${m.method}` } : { exact: `/${m.service}/${m.method}` } };
}

function uriRank(m: Record<string, unknown> | undefined): number {
  const uri = m?.uri as Record<string, string> | undefined;
  if (!uri) return -1;
  if (uri.exact !== undefined) return 3;
  if (uri.prefix !== undefined) return 2;
  if (uri.regex !== undefined) return 1;
  return -1;
}

function uriLength(m: Record<string, unknown> | undefined): number {
  const uri = m?.uri as Record<string, string> | undefined;
  if (!uri) return 0;
  return (uri.exact ?? uri.prefix ?? uri.regex ?? "").length;
}

const count = (o: unknown) => (o && typeof o === "object" ? Object.keys(o).length : 0);

/**
 * sortHTTPRoutes: the Gateway API's precedence as one ordered list (exact, prefix, regex paths;
 * longer first; a method; more headers; more query params); routes without a match last. Stable.
 */
export function sortHttpRoutes(routes: IstioHttpRoute[]): IstioHttpRoute[] {
  const before = (a: IstioHttpRoute, b: IstioHttpRoute): number => {
    if (!a.match || a.match.length === 0) return b.match && b.match.length > 0 ? 1 : 0;
    if (!b.match || b.match.length === 0) return -1;
    const m1 = a.match[0];
    const m2 = b.match[0];
    const r1 = uriRank(m1);
    const r2 = uriRank(m2);
    if (r1 !== r2) return r2 - r1;
    const l1 = uriLength(m1);
    const l2 = uriLength(m2);
    if (l1 !== l2) return l2 - l1;
    const me1 = m1?.method !== undefined;
    const me2 = m2?.method !== undefined;
    if (me1 !== me2) return me1 ? -1 : 1;
    const h = count(m2?.headers) - count(m1?.headers);
    if (h !== 0) return h;
    return count(m2?.queryParams) - count(m1?.queryParams);
  };
  return [...routes].sort(before);
}
