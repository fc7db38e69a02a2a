/**
 * Field checks istiod's validation webhook applies in several networking kinds (pkg/config/validation):
 * string matches with RE2 regexes, header names, destinations, subset names, gateway names, percents
 * and integer ranges. Each returns the first problem with its field path.
 */
import { type Check, child, isObject, type Problem, quote, typeName } from "../../ingest/check.ts";
import { dns1123Label } from "../../ingest/names.ts";
import { re2Problem } from "./regex.ts";
import { hostOrIp } from "./visibility.ts";

/** The first problem found, or none. */
export type P = Problem | undefined;

/** An integer in [min, max] (int32 and uint32 fields; JSON numbers). */
export const intIn =
  (min: number, max: number, what = "an integer"): Check =>
  (v, path) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : { field: path, message: `must be ${what} ${min}-${max}, got ${quote(v)}` };

/** int32 that must not be negative ("... must be non-negative"). */
export const nonNegativeInt32 = intIn(0, 2 ** 31 - 1, "a non-negative integer");
/** Any int32. */
export const int32 = intIn(-(2 ** 31), 2 ** 31 - 1);
/** A uint64 as proto3 JSON writes it: a number or a decimal string. */
export const uint64: Check = (v, path) =>
  (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) ||
  (typeof v === "string" && /^[0-9]{1,20}$/.test(v) && BigInt(v) < 2n ** 64n)
    ? undefined
    : { field: path, message: `must be a non-negative integer, got ${quote(v)}` };

/** ValidatePercent: an integer 0-100. */
export const percentInt = intIn(0, 100, "a percentage");

/** validatePercentage: a Percent `{ value }` that is 0, or in [0.0001, 100]. */
export const percentage: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const value = v.value ?? 0;
  const at = child(path, "value");
  if (typeof value !== "number" || !Number.isFinite(value))
    return { field: at, message: `must be a number, got ${quote(value)}` };
  if (value < 0 || value > 100 || (value > 0 && value < 0.0001))
    return { field: at, message: `percentage ${value} is neither 0.0, nor in range [0.0001, 100.0]` };
  return undefined;
};

/** A port number 1-65535 (ValidatePort). */
export const portNumber = intIn(1, 65535, "a port number");

const headerNameSyntax = /^[-_A-Za-z0-9]+$/;

/** ValidateHTTPHeaderName: letters, digits, `-` and `_`. */
export function headerName(name: string, path: string): P {
  if (name === "") return { field: path, message: "header name cannot be empty" };
  if (name.startsWith("@request.auth.claims"))
    return { field: path, message: "JWT claim based routing is only supported for gateways, not the mesh" };
  if (!headerNameSyntax.test(name))
    return { field: path, message: `${quote(name)} is not a valid header name` };
  return undefined;
}

/** A regex istiod accepts: non-empty, at most 1024 characters, valid RE2 syntax. */
export function regex(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: "regex string match should not be empty" };
  const why = re2Problem(v);
  return why
    ? { field: path, message: `${quote(v)}: ${why}; Istio uses RE2 style regex-based match` }
    : undefined;
}

/**
 * A StringMatch (one of exact, prefix, regex; `{}` is allowed): the prefix non-empty unless
 * `emptyPrefixOk` (uri), the regex valid RE2 (validateStringMatch).
 */
export function stringMatch(v: unknown, path: string, emptyPrefixOk = false): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const kinds = ["exact", "prefix", "regex"].filter((k) => v[k] !== undefined && v[k] !== null);
  if (kinds.length > 1)
    return { field: path, message: `must set only one of exact, prefix, regex; got ${kinds.join(", ")}` };
  for (const k of kinds) {
    const at = child(path, k);
    if (typeof v[k] !== "string") return { field: at, message: `must be a string, got ${typeName(v[k])}` };
  }
  if (kinds[0] === "prefix" && v.prefix === "" && !emptyPrefixOk)
    return { field: child(path, "prefix"), message: "prefix string match should not be empty" };
  if (kinds[0] === "regex") return regex(v.regex, child(path, "regex"));
  return undefined;
}

/** validateSubsetName: required, a DNS-1123 label. */
export function subsetName(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: "subset name cannot be empty" };
  const why = dns1123Label(v);
  return why ? { field: path, message: `subset name is invalid: ${quote(v)} ${why}` } : undefined;
}

/** validateDestination: host (not `*`), subset name, port number. */
export function destination(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const hostPath = child(path, "host");
  if (v.host === undefined || v.host === null) return { field: hostPath, message: "is required" };
  if (v.host === "*") return { field: hostPath, message: `invalid destination host "*"` };
  const p = hostOrIp(v.host, hostPath, false);
  if (p) return p;
  if (v.subset !== undefined && v.subset !== null && v.subset !== "") {
    const s = subsetName(v.subset, child(path, "subset"));
    if (s) return s;
  }
  if (v.port !== undefined && v.port !== null) {
    const portPath = child(path, "port");
    if (!isObject(v.port)) return { field: portPath, message: `must be an object, got ${typeName(v.port)}` };
    return portNumber(v.port.number ?? 0, child(portPath, "number"));
  }
  return undefined;
}

/** validateGatewayNames: `<namespace>/<name>` (both DNS labels) or a (legacy) FQDN such as `mesh`. */
export function gatewayName(v: unknown, path: string): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const slash = v.indexOf("/");
  if (slash < 0) {
    if (v === "" || v.length > 255)
      return { field: path, message: `${quote(v)} is not a valid gateway name` };
    for (const label of v.split(".")) {
      const why = label === "" ? "must not be empty" : dns1123Label(label);
      if (why) return { field: path, message: `gateway ${quote(v)}: label ${quote(label)} ${why}` };
    }
    return undefined;
  }
  const ns = v.slice(0, slash);
  const name = v.slice(slash + 1);
  if (ns === "" || name === "")
    return { field: path, message: "config namespace and gateway name cannot be empty" };
  if (dns1123Label(ns)) return { field: path, message: `invalid value for namespace: ${quote(ns)}` };
  if (dns1123Label(name)) return { field: path, message: `invalid value for gateway name: ${quote(name)}` };
  return undefined;
}

/** An array whose items pass `item` (null items refused, as istiod refuses nil entries). */
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

/** Present and not null (the API server reads null as unset). */
export function has(o: Record<string, unknown>, k: string): boolean {
  return o[k] !== undefined && o[k] !== null;
}

/** A list field that is present and non-empty. */
export function nonEmpty(o: Record<string, unknown>, k: string): boolean {
  return Array.isArray(o[k]) && (o[k] as unknown[]).length > 0;
}
