/**
 * Field checks the Istio networking kinds share, as istiod's validation webhook and the CRD
 * schema apply them: numbers and percentages, string matches and regexes, subset names,
 * destinations and gateway names. Each returns the first problem with its field path.
 */
import { type Check, child, isObject, type Problem, quote, typeName } from "../check.ts";
import { fqdnProblem, isDns1123Label, wildcardDomainProblem } from "./istio-names.ts";
import { re2Problem } from "./regex.ts";

/** The first problem found, or none. */
export type P = Problem | undefined;

/** An integer in [min, max] (int32 and uint32 fields; JSON numbers). */
const intIn =
  (min: number, max: number, what = "an integer"): Check =>
  (v, path) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : { field: path, message: `must be ${what} ${min}-${max}, got ${quote(v)}` };

/** Any int32. */
export const int32 = intIn(-(2 ** 31), 2 ** 31 - 1);
/** Any uint32 (the CRD's bounds). */
export const uint32 = intIn(0, 2 ** 32 - 1);

/** An int32 istiod refuses below 0, with its message (`max retries must be non-negative`). */
export const nonNegative =
  (what: string): Check =>
  (v, path) =>
    int32(v, path) ??
    ((v as number) < 0 ? { field: path, message: `${what} must be non-negative` } : undefined);

/** A uint64 as proto3 JSON writes it: a number or a decimal string. */
export const uint64: Check = (v, path) =>
  (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) ||
  (typeof v === "string" && /^[0-9]{1,20}$/.test(v) && BigInt(v) < 2n ** 64n)
    ? undefined
    : { field: path, message: `must be a non-negative integer, got ${quote(v)}` };

/** ValidatePercent: an int32 0-100. */
export const percentInt: Check = (v, path) =>
  int32(v, path) ??
  ((v as number) < 0 || (v as number) > 100
    ? { field: path, message: `percentage ${v} is not in range 0..100` }
    : undefined);

/** A JSON number (a proto double). */
export const double: Check = (v, path) =>
  typeof v === "number" && Number.isFinite(v)
    ? undefined
    : { field: path, message: `must be a number, got ${quote(v)}` };

/** validatePercentage: a Percent `{ value }` that is 0, or in [0.0001, 100]. */
export const percentage: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const value = v.value ?? 0;
  const at = child(path, "value");
  const p = double(value, at);
  if (p) return p;
  const x = value as number;
  if (x < 0 || x > 100 || (x > 0 && x < 0.0001))
    return { field: at, message: `percentage ${x} is neither 0.0, nor in range [0.0001, 100.0]` };
  return undefined;
};

/** agent.ValidatePort: a port number 1-65535. */
export const portNumber: Check = (v, path) =>
  Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535
    ? undefined
    : { field: path, message: `port number ${quote(v)} must be in the range 1..65535` };

/** validateStringRegexp: at most 1024 bytes and valid RE2 syntax; `where` names the match as istiod does. */
export function regex(v: unknown, path: string, where: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: `"${where}": regex string match should not be empty` };
  const why = re2Problem(v);
  if (!why) return undefined;
  return {
    field: path,
    message: why.startsWith("regex is too large")
      ? `"${where}": ${why}`
      : `"${where}": ${why}; Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)`,
  };
}

const matchKinds = ["exact", "prefix", "regex"] as const;

/**
 * A StringMatch: at most one of exact, prefix, regex (the CRD's oneOf; `{}` is allowed), the
 * prefix not empty unless `emptyPrefixOk` (uri), the regex valid (validateStringMatch).
 */
export function stringMatch(v: unknown, path: string, where: string, emptyPrefixOk = false): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const kinds = matchKinds.filter((k) => has(v, k));
  if (kinds.length > 1)
    return { field: path, message: `must set only one of exact, prefix, regex; got ${kinds.join(", ")}` };
  const kind = kinds[0];
  if (kind === undefined) return undefined;
  const at = child(path, kind);
  if (typeof v[kind] !== "string")
    return { field: at, message: `must be a string, got ${typeName(v[kind])}` };
  if (kind === "prefix" && v.prefix === "" && !emptyPrefixOk)
    return { field: at, message: `"${where}": prefix string match should not be empty` };
  return kind === "regex" ? regex(v.regex, at, where) : undefined;
}

/** validateSubsetName: not empty, a DNS-1123 label (either case). */
export function subsetName(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: "subset name cannot be empty" };
  return isDns1123Label(v) ? undefined : { field: path, message: `subset name is invalid: ${v}` };
}

/** validateDestination: a host (ValidateWildcardDomain, not `*`), a subset name, a port number. */
export function destination(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const hostPath = child(path, "host");
  if (!has(v, "host")) return { field: hostPath, message: "is required" };
  if (typeof v.host !== "string")
    return { field: hostPath, message: `must be a string, got ${typeName(v.host)}` };
  if (v.host === "*") return { field: hostPath, message: "invalid destination host *" };
  const why = wildcardDomainProblem(v.host);
  if (why) return { field: hostPath, message: why };
  if (has(v, "subset") && v.subset !== "") {
    const p = subsetName(v.subset, child(path, "subset"));
    if (p) return p;
  }
  if (has(v, "port")) {
    const portPath = child(path, "port");
    if (!isObject(v.port)) return { field: portPath, message: `must be an object, got ${typeName(v.port)}` };
    const at = child(portPath, "number");
    return uint32(v.port.number ?? 0, at) ?? portNumber(v.port.number ?? 0, at);
  }
  return undefined;
}

/**
 * validateGatewayNames: `<namespace>/<name>` (both DNS-1123 labels), or a legacy name without a
 * namespace (`mesh`, `gw.ns.svc.cluster.local`) that must be an FQDN. As in istiod, the names after
 * the first legacy one are not checked.
 */
export function gatewayNames(v: unknown, path: string): P {
  if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
  for (let i = 0; i < v.length; i++) {
    const name = v[i];
    const at = `${path}[${i}]`;
    if (typeof name !== "string") return { field: at, message: `must be a string, got ${typeName(name)}` };
    const slash = name.indexOf("/");
    if (slash < 0) {
      const why = fqdnProblem(name);
      return why ? { field: at, message: why } : undefined;
    }
    const ns = name.slice(0, slash);
    const gw = name.slice(slash + 1);
    if (ns === "" || gw === "")
      return { field: at, message: "config namespace and gateway name cannot be empty" };
    if (!isDns1123Label(ns)) return { field: at, message: `invalid value for namespace: ${quote(ns)}` };
    if (!isDns1123Label(gw)) return { field: at, message: `invalid value for gateway name: ${quote(gw)}` };
  }
  return undefined;
}

/** An array whose items pass `item` (null items refused: protojson cannot read them). */
export function eachOf(v: unknown, path: string, item: (x: unknown, at: string, i: number) => P): P {
  if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
  for (let i = 0; i < v.length; i++) {
    const at = `${path}[${i}]`;
    if (v[i] === null || v[i] === undefined) return { field: at, message: "may not be null" };
    const p = item(v[i], at, i);
    if (p) return p;
  }
  return undefined;
}

/** Checks fields of `v` that are present, in the order given; the first problem wins. */
export function fields(v: Record<string, unknown>, path: string, checks: Record<string, Check>): P {
  for (const [k, check] of Object.entries(checks)) {
    if (!has(v, k)) continue;
    const p = check(v[k], child(path, k));
    if (p) return p;
  }
  return undefined;
}

/** Present and not null (the API server reads null as unset). */
export function has(o: Record<string, unknown>, k: string): boolean {
  return o[k] !== undefined && o[k] !== null;
}

/** A list field that is present and non-empty. */
export function nonEmpty(o: Record<string, unknown>, k: string): boolean {
  return Array.isArray(o[k]) && (o[k] as unknown[]).length > 0;
}

/** A string field's value, "" when absent (proto3's default). */
export function str(o: Record<string, unknown>, k: string): string {
  return typeof o[k] === "string" ? (o[k] as string) : "";
}

/** The CRD's oneOf: at most one of `keys` set. */
export function atMostOneOf(v: Record<string, unknown>, path: string, keys: readonly string[]): P {
  const set = keys.filter((k) => has(v, k));
  return set.length > 1
    ? { field: path, message: `must set only one of ${keys.join(", ")}; got ${set.join(", ")}` }
    : undefined;
}

/** An object, or the problem naming what it is instead. */
export const objectProblem = (v: unknown, path: string): P =>
  isObject(v) ? undefined : { field: path, message: `must be an object, got ${typeName(v)}` };

/** A match's `port`: a uint32, and a port number unless 0 (unset). */
export function matchPort(m: Record<string, unknown>, path: string): P {
  if (!has(m, "port")) return undefined;
  const at = child(path, "port");
  return uint32(m.port, at) ?? (m.port !== 0 ? portNumber(m.port, at) : undefined);
}
