/**
 * The Envoy matchers AuthorizationPolicy values turn into, as istiod writes them
 * (pilot/pkg/security/authz/matcher): a value's `*` prefix or suffix becomes a suffix or prefix
 * match, a lone `*` a presence match, since Envoy refuses an empty prefix or suffix. Pure.
 */
import { create } from "@bufbuild/protobuf";
import {
  type HeaderMatcher,
  HeaderMatcherSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type MetadataMatcher,
  MetadataMatcher_PathSegmentSchema,
  MetadataMatcherSchema,
} from "../../gen/envoy/type/matcher/v3/metadata_pb.ts";
import { type PathMatcher, PathMatcherSchema } from "../../gen/envoy/type/matcher/v3/path_pb.ts";
import { RegexMatcherSchema } from "../../gen/envoy/type/matcher/v3/regex_pb.ts";
import { type StringMatcher, StringMatcherSchema } from "../../gen/envoy/type/matcher/v3/string_pb.ts";
import {
  ListMatcherSchema,
  OrMatcherSchema,
  type ValueMatcher,
  ValueMatcherSchema,
} from "../../gen/envoy/type/matcher/v3/value_pb.ts";

/** The JWT filter whose dynamic metadata holds the verified claims (istiod's EnvoyJwtFilterName). */
export const JWT_FILTER_NAME = "envoy.filters.http.jwt_authn";
/** The metadata key under which the JWT filter stores the payload. */
export const JWT_PAYLOAD_KEY = "payload";

/** An exact string match. */
export const exactMatcher = (exact: string, ignoreCase = false): StringMatcher =>
  create(StringMatcherSchema, { ignoreCase, matchPattern: { case: "exact", value: exact } });

/** A prefix string match (the prefix must not be empty). */
export const prefixMatcher = (prefix: string, ignoreCase = false): StringMatcher =>
  create(StringMatcherSchema, { ignoreCase, matchPattern: { case: "prefix", value: prefix } });

/** A suffix string match (the suffix must not be empty). */
export const suffixMatcher = (suffix: string, ignoreCase = false): StringMatcher =>
  create(StringMatcherSchema, { ignoreCase, matchPattern: { case: "suffix", value: suffix } });

/** A safe_regex match on the whole string (RE2 syntax, no engine set, as istiod writes it). */
export const regexMatcher = (regex: string): StringMatcher =>
  create(StringMatcherSchema, {
    matchPattern: { case: "safeRegex", value: create(RegexMatcherSchema, { regex }) },
  });

/** Go's regexp.QuoteMeta: escapes every RE2 metacharacter, so the text matches itself only. */
export function quoteMeta(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/**
 * istiod's StringMatcherWithPrefix: `*` ▶ regex `.+`; `*x` ▶ suffix `x` (or, with a prefix,
 * regex `<prefix>.*x`); `x*` ▶ prefix `<prefix>x`; otherwise exact `<prefix>x`.
 */
export function stringMatcher(value: string, prefix = ""): StringMatcher {
  if (value === "*") return regexMatcher(".+");
  if (value.startsWith("*")) {
    if (prefix === "") return suffixMatcher(value.slice(1));
    return regexMatcher(`${prefix}.*${quoteMeta(value.slice(1))}`);
  }
  if (value.endsWith("*")) return prefixMatcher(prefix + value.slice(0, -1));
  return exactMatcher(prefix + value);
}

/** A header match: `*` ▶ present; `*x` ▶ suffix; `x*` ▶ prefix; otherwise exact (istiod's HeaderMatcher). */
export function headerMatcher(name: string, value: string, ignoreCase = false): HeaderMatcher {
  if (value === "*")
    return create(HeaderMatcherSchema, { name, headerMatchSpecifier: { case: "presentMatch", value: true } });
  const m = value.startsWith("*")
    ? suffixMatcher(value.slice(1), ignoreCase)
    : value.endsWith("*")
      ? prefixMatcher(value.slice(0, -1), ignoreCase)
      : exactMatcher(value, ignoreCase);
  return create(HeaderMatcherSchema, { name, headerMatchSpecifier: { case: "stringMatch", value: m } });
}

/** The `:authority` match of a host: as a header match, case-insensitive (hosts are). */
export const hostMatcher = (name: string, value: string): HeaderMatcher => headerMatcher(name, value, true);

/** The url_path match of a path (query and fragment stripped by Envoy before matching). */
export const pathMatcher = (path: string): PathMatcher =>
  create(PathMatcherSchema, { rule: { case: "path", value: stringMatcher(path) } });

/** A value matcher holding one string matcher. */
export const stringValueMatcher = (m: StringMatcher): ValueMatcher =>
  create(ValueMatcherSchema, { matchPattern: { case: "stringMatch", value: m } });

/** One value matcher, or an OR of several (istiod's OrMatcher: a single one stays bare). */
export function orValueMatcher(matchers: readonly ValueMatcher[]): ValueMatcher {
  if (matchers.length === 1) return matchers[0] as ValueMatcher;
  return create(ValueMatcherSchema, {
    matchPattern: { case: "orMatch", value: create(OrMatcherSchema, { valueMatchers: [...matchers] }) },
  });
}

/** The OR of the string matchers of `values` (istiod's StringOrMatcher). */
export const stringOrMatcher = (values: readonly string[]): ValueMatcher =>
  orValueMatcher(values.map((v) => stringValueMatcher(stringMatcher(v))));

const metadataPath = (keys: readonly string[]) =>
  keys.map((key) => create(MetadataMatcher_PathSegmentSchema, { segment: { case: "key", value: key } }));

/** A dynamic-metadata match on `filter`'s value at `keys` (istiod's MetadataValueMatcher). */
export function metadataValueMatcher(
  filter: string,
  keys: readonly string[],
  value: ValueMatcher,
): MetadataMatcher {
  return create(MetadataMatcherSchema, { filter, path: metadataPath(keys), value });
}

/** A dynamic-metadata string match under one key (istiod's MetadataStringMatcher). */
export const metadataStringMatcher = (filter: string, key: string, m: StringMatcher): MetadataMatcher =>
  metadataValueMatcher(filter, [key], stringValueMatcher(m));

/**
 * istiod's MetadataListValueMatcher with extended JWT matching: the value at `keys` matches when
 * it is a list one of whose items matches, or when it matches itself (a claim may be either).
 */
export function metadataListValueMatcher(
  filter: string,
  keys: readonly string[],
  value: ValueMatcher,
): MetadataMatcher {
  const list = create(ValueMatcherSchema, {
    matchPattern: {
      case: "listMatch",
      value: create(ListMatcherSchema, { matchPattern: { case: "oneOf", value } }),
    },
  });
  return metadataValueMatcher(filter, keys, orValueMatcher([list, value]));
}

/** A match on one verified JWT claim, a string (iss, sub). */
export const jwtClaimMatcher = (claim: string, m: StringMatcher): MetadataMatcher =>
  metadataValueMatcher(JWT_FILTER_NAME, [JWT_PAYLOAD_KEY, claim], stringValueMatcher(m));

/** A match on a verified JWT claim path whose value may be a string or a list of strings. */
export const jwtClaimsMatcher = (claims: readonly string[], value: ValueMatcher): MetadataMatcher =>
  metadataListValueMatcher(JWT_FILTER_NAME, [JWT_PAYLOAD_KEY, ...claims], value);
