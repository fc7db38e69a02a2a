/**
 * The warnings istiod's ValidateVirtualService gives for a valid VirtualService, in its words:
 * legacy gateway names, deprecated mirrorPercent, large direct responses, aborts without an error
 * type, IP addresses as SNI hosts, and its analysis of unreachable rules and ineffective matches
 * (analyzeUnreachableHTTPRules/TCPRules/TLSRules, genMatchHTTPRoutes, coveredValidation).
 */
import { isObject } from "../check.ts";
import { goIpFamily, wildcardDomainProblem } from "./istio-names.ts";
import { bodySize } from "./validate-http-parts.ts";
import { gatewayHostProblem } from "./validate-virtual-service.ts";

type Raw = Record<string, unknown>;
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** Warnings for a VirtualService `spec` that passed validation. */
export function virtualServiceWarnings(spec: Raw): string[] {
  const out: string[] = [];
  const gateways = Array.isArray(spec.gateways) ? (spec.gateways as string[]) : [];
  legacyGateway(gateways, "spec.gateways", out);
  for (const [i, r] of list(spec.http).entries()) {
    const at = `spec.http[${i}]`;
    for (const [j, m] of list(r.match).entries())
      legacyGateway(m.gateways, `${at}.match[${j}].gateways`, out);
    if (r.mirrorPercent !== undefined && r.mirrorPercent !== null)
      out.push(
        `${at}.mirrorPercent: using deprecated setting "mirrorPercent", use "mirrorPercentage" instead`,
      );
    const dr = r.directResponse;
    if (isObject(dr) && isObject(dr.body) && bodySize(dr.body) > 100 * 1024)
      out.push(`${at}.directResponse.body: large direct_responses may impact control plane performance`);
    const abort = isObject(r.fault) ? r.fault.abort : undefined;
    if (isObject(abort) && !["httpStatus", "grpcStatus", "http2Error"].some((k) => abort[k] != null))
      out.push(`${at}.fault.abort: abort configured, but error type not set`);
  }
  for (const [i, r] of list(spec.tls).entries())
    for (const [j, m] of list(r.match).entries()) {
      const at = `spec.tls[${i}].match[${j}]`;
      legacyGateway(m.gateways, `${at}.gateways`, out);
      for (const [k, h] of (Array.isArray(m.sniHosts) ? (m.sniHosts as string[]) : []).entries()) {
        const why = gateways.includes("mesh") ? wildcardDomainProblem(h) : gatewayHostProblem(true, h);
        if (why && goIpFamily(h))
          out.push(
            `${at}.sniHosts[${k}]: using an IP address ("${h}") goes against SNI spec and most clients do not support this`,
          );
      }
    }
  for (const [i, r] of list(spec.tcp).entries())
    for (const [j, m] of list(r.match).entries())
      legacyGateway(m.gateways, `spec.tcp[${i}].match[${j}].gateways`, out);
  unreachable(list(spec.http), true, out);
  unreachable(list(spec.tcp), false, out);
  unreachable(list(spec.tls), false, out);
  return [...new Set(out)];
}

/** validateGatewayNames: the first name without a namespace, in the legacy `name.namespace` form. */
function legacyGateway(v: unknown, path: string, out: string[]): void {
  if (!Array.isArray(v)) return;
  const i = v.findIndex((g) => typeof g === "string" && !g.includes("/"));
  const g = v[i] as string | undefined;
  if (g === undefined || !g.includes(".")) return;
  const parts = g.split(".");
  out.push(
    `${path}[${i}]: using legacy gatewayName format "${g}"; prefer the <namespace>/<name> format: "${parts[1]}/${parts[0]}"`,
  );
}

const routeName = (r: Raw, n: number, http: boolean) =>
  http && typeof r.name === "string" && r.name !== "" ? JSON.stringify(r.name) : `#${n}`;
const requestName = (m: Raw, n: number, http: boolean) =>
  http && typeof m.name === "string" && m.name !== "" ? JSON.stringify(m.name) : `#${n}`;

const unused = (rule: string, reason: string) => `virtualService rule ${rule} not used (${reason})`;
const ineffective = (rule: string, match: string, dup: string) =>
  `virtualService rule ${rule} match ${match} is not used (duplicate/overlapping match in rule ${dup})`;

/** analyzeUnreachableHTTPRules (and its TCP and TLS copies, without the prefix overlap analysis). */
function unreachable(routes: Raw[], http: boolean, out: string[]): void {
  const seen = new Map<string, number>();
  let empty = -1;
  const prefixes: PrefixMatch[] = [];
  routes.forEach((r, n) => {
    const matches = list(r.match);
    const rule = routeName(r, n, http);
    if (matches.length === 0) {
      if (empty >= 0) out.push(unused(rule, "only the last rule can have no matches"));
      empty = n;
      return;
    }
    let duplicates = 0;
    matches.forEach((m, k) => {
      if (empty >= 0) {
        out.push(unused(rule, "route without matches defined before"));
        return;
      }
      const key = canonical(m, http);
      const dup = seen.get(key);
      if (dup !== undefined) {
        out.push(ineffective(rule, requestName(m, k, http), routeName(routes[dup] as Raw, dup, http)));
        duplicates++;
        return;
      }
      seen.set(key, n);
      const p = http ? prefixMatch(rule, requestName(m, k, http), m) : undefined;
      if (p) prefixes.push(p);
    });
    if (duplicates === matches.length) out.push(unused(rule, "all matches used by prior rules"));
  });
  for (let i = 0; i < prefixes.length; i++)
    for (let j = i + 1; j < prefixes.length; j++) {
      const [a, b] = [prefixes[i] as PrefixMatch, prefixes[j] as PrefixMatch];
      if (a.prefix !== b.prefix && covered(a, b))
        out.push(
          ineffective(
            b.rule,
            `${b.match} of prefix ${b.prefix}`,
            `${a.match} of prefix ${a.prefix} on ${a.rule}`,
          ),
        );
    }
}

const mapFields = new Set(["headers", "queryParams", "withoutHeaders", "sourceLabels"]);

/** asJSON: a match as Go's encoding/json writes it (no name, defaults omitted), keys sorted. */
function canonical(m: Raw, http: boolean): string {
  const norm = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => norm(x, false));
    if (!isObject(v)) return v;
    const out: Raw = {};
    for (const k of Object.keys(v).sort()) {
      const x = v[k];
      if ((top && http && k === "name") || x === null || x === "" || x === 0 || x === false) continue;
      if (Array.isArray(x) && x.length === 0) continue;
      if (isObject(x) && mapFields.has(k) && Object.keys(x).length === 0) continue;
      out[k] = norm(x, false);
    }
    return out;
  };
  return JSON.stringify(norm(m, true));
}

/** OverlappingMatchValidationForHTTPRoute: what a prefix match matches on. */
interface PrefixMatch {
  rule: string;
  match: string;
  prefix: string;
  port: number;
  method: string;
  authority: string;
  headers: Map<string, string>;
  queryParams: Map<string, string>;
  withoutHeaders: Map<string, string>;
}

const exactOrPrefix = (sm: unknown): string => {
  if (!isObject(sm)) return "";
  if (typeof sm.exact === "string" && sm.exact !== "") return `exact:${sm.exact}`;
  if (typeof sm.prefix === "string" && sm.prefix !== "") return `prefix:${sm.prefix}`;
  return "";
};

const valueMap = (v: unknown) =>
  new Map(Object.entries(isObject(v) ? v : {}).map(([k, x]) => [k, exactOrPrefix(x)] as const));

/** genMatchHTTPRoutes: only matches on a non-empty uri prefix; the method defaults to GET. */
function prefixMatch(rule: string, match: string, m: Raw): PrefixMatch | undefined {
  const prefix = isObject(m.uri) && typeof m.uri.prefix === "string" ? m.uri.prefix : "";
  if (prefix === "") return undefined;
  return {
    rule,
    match,
    prefix,
    port: typeof m.port === "number" ? m.port : 0,
    method: exactOrPrefix(m.method) || "exact:GET",
    authority: exactOrPrefix(m.authority),
    headers: valueMap(m.headers),
    queryParams: valueMap(m.queryParams),
    withoutHeaders: valueMap(m.withoutHeaders),
  };
}

/** coveredValidation: whether the earlier prefix match `a` matches everything `b` does. */
function covered(a: PrefixMatch, b: PrefixMatch): boolean {
  if (!b.prefix.startsWith(a.prefix) || a.port !== b.port) return false;
  if (a.method !== b.method && !a.method.startsWith(b.method)) return false;
  if (a.authority !== b.authority && !a.authority.startsWith(b.authority)) return false;
  const maps = [
    [a.headers, b.headers],
    [a.queryParams, b.queryParams],
    [a.withoutHeaders, b.withoutHeaders],
  ] as const;
  for (const [x, y] of maps) {
    if (x.size !== y.size) return false;
    for (const [k, v] of x) {
      const w = y.get(k);
      if (w === undefined || (v !== w && !v.startsWith(w))) return false;
    }
  }
  return true;
}
