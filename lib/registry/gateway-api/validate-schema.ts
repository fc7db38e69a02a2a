/**
 * The OpenAPI and CEL vocabulary the Gateway API CRDs use, as Checks (lib/registry/check.ts):
 * strings with lengths and patterns, bounded integers, lists with item bounds and unique keys, and
 * objects whose `x-kubernetes-validations` rules run after their fields, each rule refusing with
 * the CRD's message verbatim. Rules see the object as the API server defaulted it: a field the CRD
 * defaults is read with its default when absent.
 */
import { all, arrayOf, type Check, child, isObject, object, quote, typeName } from "../check.ts";

/** A CEL rule on a value: true when it holds; the message is the CRD's. */
export type Rule = [holds: (v: Record<string, unknown>) => boolean, message: string];

/** A string with the schema's minLength, maxLength and pattern. */
export const text =
  (o: { min?: number; max?: number; pattern?: RegExp } = {}): Check =>
  (v, path) => {
    if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
    // The API server counts characters (runes), not UTF-16 units.
    const n = [...v].length;
    if (o.min !== undefined && n < o.min)
      return { field: path, message: `must be at least ${o.min} characters, got ${n}` };
    if (o.max !== undefined && n > o.max)
      return { field: path, message: `must be at most ${o.max} characters, got ${n}` };
    if (o.pattern && !o.pattern.test(v))
      return { field: path, message: `${quote(v)} must match ${o.pattern.source}` };
    return undefined;
  };

/** An integer in [min, max] (the schema's minimum and maximum). */
export const int =
  (min: number, max = 2 ** 31 - 1): Check =>
  (v, path) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : { field: path, message: `must be an integer ${min}-${max}, got ${quote(v)}` };

/** One of the schema's enum values (strings or numbers). */
export const enumOf =
  (values: readonly (string | number)[]): Check =>
  (v, path) =>
    values.includes(v as string | number)
      ? undefined
      : { field: path, message: `unsupported value ${quote(v)}; want one of ${values.join(", ")}` };

/**
 * A list: items pass `item`, minItems/maxItems hold, and for `x-kubernetes-list-type: map` (`key`)
 * or `set` (`set: true`) no two items share their key or value, as the API server refuses.
 */
export const list =
  (item: Check, o: { min?: number; max?: number; key?: string; set?: boolean } = {}): Check =>
  (v, path) => {
    if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
    if (o.min !== undefined && v.length < o.min)
      return { field: path, message: `must have at least ${o.min} items, got ${v.length}` };
    const p = arrayOf(item, o.max)(v, path);
    if (p || (!o.key && !o.set)) return p;
    const seen = new Set<string>();
    for (let i = 0; i < v.length; i++) {
      const x = o.key ? (v[i] as Record<string, unknown>)[o.key] : v[i];
      const id = JSON.stringify(x);
      if (seen.has(id))
        return {
          field: `${path}[${i}]`,
          message: o.key ? `duplicate entries for key [${o.key}=${quote(x)}]` : `duplicate value ${quote(x)}`,
        };
      seen.add(id);
    }
    return undefined;
  };

/** An object of strings with at most `max` properties, values passing `value`. */
export const stringMap =
  (value: Check, max?: number): Check =>
  (v, path) => {
    if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
    const keys = Object.keys(v);
    if (max !== undefined && keys.length > max)
      return { field: path, message: `must have at most ${max} properties, got ${keys.length}` };
    for (const k of keys) {
      const p = value(v[k], child(path, k));
      if (p) return p;
    }
    return undefined;
  };

/** An object: its fields' checks and required fields (check.ts `object`), then its CEL rules in order. */
export const obj = (
  fields: Record<string, Check>,
  required: readonly string[] = [],
  rules: Rule[] = [],
): Check => all(object(fields, required), celRules(rules));

/** The rules of a value that is already known to have the right shape; the first that fails refuses. */
export const celRules =
  (rules: Rule[]): Check =>
  (v, path) => {
    if (!isObject(v) && !Array.isArray(v)) return undefined;
    for (const [holds, message] of rules)
      if (!holds(v as Record<string, unknown>)) return { field: path, message };
    return undefined;
  };

/** CEL rules on a list (`self` is the array). */
export const listRules =
  (rules: [holds: (v: unknown[]) => boolean, message: string][]): Check =>
  (v, path) => {
    if (!Array.isArray(v)) return undefined;
    for (const [holds, message] of rules) if (!holds(v)) return { field: path, message };
    return undefined;
  };

/** CEL's has(): present and not null. */
export const has = (o: unknown, k: string): boolean => isObject(o) && o[k] !== undefined && o[k] !== null;

/** A field's value, or the CRD's default when absent. */
export const get = (o: unknown, k: string, fallback: unknown = undefined): unknown =>
  has(o, k) ? (o as Record<string, unknown>)[k] : fallback;

/** The items of a list field, [] when absent. */
export const items = (o: unknown, k: string): Record<string, unknown>[] => {
  const v = get(o, k);
  return Array.isArray(v) ? (v.filter(isObject) as Record<string, unknown>[]) : [];
};

// The patterns the CRDs share.
const dnsSubdomain = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
/** Group: "" or a DNS subdomain. */
export const group = text({ max: 253, pattern: new RegExp(`^$|^${dnsSubdomain}$`) });
/** Kind: a CamelCase name. */
export const kind = text({ min: 1, max: 63, pattern: /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/ });
/** ObjectName. */
export const objectName = text({ min: 1, max: 253 });
/** Namespace: a DNS label. */
export const namespace = text({ min: 1, max: 63, pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/ });
/** SectionName (and listener names): a DNS subdomain. */
export const sectionName = text({ min: 1, max: 253, pattern: new RegExp(`^${dnsSubdomain}$`) });
/** Hostname: a DNS subdomain, optionally with a leading `*.`. */
export const hostname = text({ min: 1, max: 253, pattern: new RegExp(`^(\\*\\.)?${dnsSubdomain}$`) });
/** PreciseHostname: no wildcard. */
export const preciseHostname = text({ min: 1, max: 253, pattern: new RegExp(`^${dnsSubdomain}$`) });
/** PortNumber. */
export const portNumber = int(1, 65535);
/** A controller name or implementation-specific value: `<domain>/<path>`. */
export const domainPrefixedString = new RegExp(`^${dnsSubdomain}\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$`);
/** A label or annotation key: an optional DNS subdomain prefix, a name of up to 63 characters. */
export const qualifiedKey = new RegExp(`^(${dnsSubdomain}/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$`);
/** An HTTP header (or query parameter) name, as RFC 7230 tokens. */
export const headerName = text({ min: 1, max: 256, pattern: /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/ });

/** The object's required `spec`, checked by `check`. */
export function specOf(o: unknown, path: string, check: Check, required = true): ReturnType<Check> {
  if (!isObject(o)) return undefined;
  const at = child(path, "spec");
  if (o.spec === undefined || o.spec === null)
    return required ? { field: at, message: "is required" } : undefined;
  if (!isObject(o.spec)) return { field: at, message: `must be an object, got ${typeName(o.spec)}` };
  return check(o.spec, at);
}
