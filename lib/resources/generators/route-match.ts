/**
 * A VirtualService match as an Envoy RouteMatch, as istiod's TranslateRouteMatch builds it: the
 * path (gRPC method path) as `path` / `prefix` / `safe_regex` (RE2), `case_sensitive` always set,
 * headers sorted by name as `string_match` (exact / prefix / safe_regex) or `present_match`.
 */
import {
  type HeaderMatcher,
  HeaderMatcherSchema,
  type RouteMatch,
  RouteMatchSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import { RegexMatcherSchema } from "../../gen/envoy/type/matcher/v3/regex_pb.ts";
import { type StringMatcher, StringMatcherSchema } from "../../gen/envoy/type/matcher/v3/string_pb.ts";
import type {
  HeaderMatch,
  RouteMatch as IstioMatch,
  StringMatchKind,
} from "../../registry/istio/virtual-service.ts";
import { message } from "./shared.ts";

/**
 * Match conditions that cannot be expressed in a route every client shares (they depend on the
 * calling proxy) or that the model does not carry: a match holding any of them is left out of the
 * RouteConfiguration, so it never matches more than it should. `statPrefix` only names stats.
 */
export function expressible(m: IstioMatch): boolean {
  return m.ignored.every((k) => k === "statPrefix");
}

/** TranslateRouteMatch: no match ▶ prefix "/" alone; otherwise path, case sensitivity and headers. */
export function routeMatch(m: IstioMatch | undefined): RouteMatch {
  if (!m) return message(RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } });
  const p = m.path;
  let pathSpecifier: RouteMatch["pathSpecifier"] = { case: "prefix", value: "/" };
  if (p?.kind === "exact") pathSpecifier = { case: "path", value: p.value };
  else if (p?.kind === "prefix") pathSpecifier = { case: "prefix", value: p.value };
  // An empty regex matches every path (and would break RegexMatcher's min_len rule): prefix "/".
  else if (p?.kind === "regex" && p.value !== "")
    pathSpecifier = { case: "safeRegex", value: regex(p.value) };
  return message(RouteMatchSchema, {
    pathSpecifier,
    caseSensitive: !(p?.ignoreCase ?? false),
    headers: m.headers.map(headerMatcher),
  });
}

/**
 * translateHeaderMatch: a catch-all StringMatch (present, an empty prefix, regex `*`) ▶ present_match,
 * else string_match. An empty prefix or regex (any value) is present_match too: as a StringMatcher
 * it would break Envoy's min_len rules.
 */
function headerMatcher(h: HeaderMatch): HeaderMatcher {
  const catchAll =
    h.kind === "present" ||
    (h.kind === "prefix" && h.value === "") ||
    (h.kind === "regex" && (h.value === "*" || h.value === ""));
  return message(HeaderMatcherSchema, {
    name: h.name,
    headerMatchSpecifier: catchAll
      ? { case: "presentMatch", value: true }
      : { case: "stringMatch", value: stringMatcher(h.kind as StringMatchKind, h.value) },
  });
}

function stringMatcher(kind: StringMatchKind, value: string): StringMatcher {
  const matchPattern: StringMatcher["matchPattern"] =
    kind === "regex"
      ? { case: "safeRegex", value: regex(value) }
      : kind === "prefix"
        ? { case: "prefix", value }
        : { case: "exact", value };
  return message(StringMatcherSchema, { matchPattern });
}

/** A RegexMatcher with the engine left to its default (RE2), as current istiod emits it. */
function regex(value: string) {
  return message(RegexMatcherSchema, { regex: value });
}
