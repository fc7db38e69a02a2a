/**
 * HTTPRoute (gateway.networking.k8s.io v1, v1beta1: one schema) as the standard-channel CRD
 * checks it: parentRefs, hostnames, rules with their matches (path rules), filters, backendRefs and
 * timeouts, and the rule-level CEL rules tying redirects and prefix rewrites to one PathPrefix
 * match. Messages of CEL rules are the CRD's. Rules only newer releases add and that refuse what
 * older ones accepted are left out (an empty `rules` list; see docs/reference/gateway-validation.md).
 */
import { all, type Check } from "../check.ts";
import { httpFilters } from "./validate-http-filters.ts";
import {
  backendRef,
  headerMatches,
  hostnames,
  parentRefs,
  ruleName,
  totalMatches,
} from "./validate-route-common.ts";
import {
  enumOf,
  get,
  has,
  headerName,
  items,
  list,
  obj,
  type Rule,
  specOf,
  text,
} from "./validate-schema.ts";

const pathTypes = ["Exact", "PathPrefix", "RegularExpression"];
const plainPath = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;
const where = "when type one of ['Exact', 'PathPrefix']";

/** A literal path's rules (Exact and PathPrefix; the defaults are PathPrefix and "/"). */
const literal = (holds: (value: string) => boolean, message: string): Rule => [
  (p) => {
    const type = get(p, "type", "PathPrefix");
    return !(type === "Exact" || type === "PathPrefix") || holds(get(p, "value", "/") as string);
  },
  message,
];

const pathMatch: Check = obj(
  { type: enumOf(pathTypes), value: text({ max: 1024 }) },
  [],
  [
    literal((v) => v.startsWith("/"), `value must be an absolute path and start with '/' ${where}`),
    ...["//", "/./", "/../", "%2f", "%2F", "#"].map((s) =>
      literal((v) => !v.includes(s), `must not contain '${s}' ${where}`),
    ),
    ...["/..", "/."].map((s) => literal((v) => !v.endsWith(s), `must not end with '${s}' ${where}`)),
    [
      (p) => pathTypes.includes(get(p, "type", "PathPrefix") as string),
      "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']",
    ],
    literal(
      (v) => plainPath.test(v),
      "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']",
    ),
  ],
);

const match: Check = obj({
  path: pathMatch,
  headers: headerMatches,
  queryParams: list(
    obj(
      { name: headerName, value: text({ min: 1, max: 1024 }), type: enumOf(["Exact", "RegularExpression"]) },
      ["name", "value"],
    ),
    { max: 16, key: "name" },
  ),
  method: enumOf(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]),
});

const durationSyntax = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const unitMs: Record<string, number> = { h: 3600000, m: 60000, s: 1000, ms: 1 };

/** A Gateway API Duration in milliseconds (its syntax checked first). */
function millis(d: string): number {
  let total = 0;
  for (const [, n, unit] of d.matchAll(/([0-9]+)(ms|h|m|s)/g))
    total += Number(n) * (unitMs[unit as string] ?? 0);
  return total;
}

const duration = text({ pattern: durationSyntax });

const timeouts: Check = obj(
  { request: duration, backendRequest: duration },
  [],
  [
    [
      (t) =>
        !(
          has(t, "request") &&
          has(t, "backendRequest") &&
          millis(t.request as string) !== 0 &&
          millis(t.backendRequest as string) > millis(t.request as string)
        ),
      "backendRequest timeout cannot be longer than request timeout",
    ],
  ],
);

/** A filter that replaces a path prefix, of `field` (requestRedirect or urlRewrite). */
const prefixReplacing = (field: string) => (f: unknown) => {
  const path = get(get(f, field), "path");
  return get(path, "type") === "ReplacePrefixMatch" && has(path, "replacePrefixMatch");
};

/** Exactly one match, on a path prefix (a match's path defaults to PathPrefix "/"; no matches: that one match). */
function onePrefixMatch(rule: Record<string, unknown>): boolean {
  if (!has(rule, "matches")) return true;
  const matches = items(rule, "matches");
  return matches.length === 1 && get(get(matches[0], "path"), "type", "PathPrefix") === "PathPrefix";
}

const exactlyOne = <T>(xs: T[], p: (x: T) => boolean) => xs.filter(p).length === 1;

const ruleRules: Rule[] = [
  [
    (r) =>
      items(r, "backendRefs").length === 0 || items(r, "filters").every((f) => !has(f, "requestRedirect")),
    "RequestRedirect filter must not be used together with backendRefs",
  ],
  ...(["requestRedirect", "urlRewrite"] as const).map(
    (field): Rule => [
      (r) => !exactlyOne(items(r, "filters"), prefixReplacing(field)) || onePrefixMatch(r),
      `When using ${field === "requestRedirect" ? "RequestRedirect" : "URLRewrite"} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified`,
    ],
  ),
  ...(["requestRedirect", "urlRewrite"] as const).map(
    (field): Rule => [
      (r) =>
        !exactlyOne(items(r, "backendRefs"), (b) =>
          exactlyOne(items(b, "filters"), prefixReplacing(field)),
        ) || onePrefixMatch(r),
      field === "requestRedirect"
        ? "Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"
        : "Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified",
    ],
  ),
];

const rule: Check = obj(
  {
    name: ruleName,
    matches: list(match, { max: 64 }),
    filters: httpFilters,
    backendRefs: list(backendRef(httpFilters), { max: 16 }),
    timeouts,
  },
  [],
  ruleRules,
);

const spec: Check = obj({
  parentRefs,
  hostnames,
  rules: all(list(rule, { max: 16 }), totalMatches(1)),
});

/** Checks an HTTPRoute object's `spec` as the Gateway API's CRD does. */
export const httpRouteCheck: Check = (o, path) => specOf(o, path, spec);
