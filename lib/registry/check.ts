/** Small structural checks that report the first problem with its path. Pure, no dependencies. */
import { logSafe } from "../log-safe.ts";
import { type IpFamily, isIpv4, parseIp } from "../model/ip.ts";
import type { NameRule } from "./names.ts";

/** A problem at a path relative to the value checked. */
export interface Problem {
  field: string;
  message: string;
}

export type Check = (value: unknown, path: string) => Problem | undefined;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Describes a JSON value's type for messages. */
export function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** A value for a message, escaped as logSafe does (so it can never forge a log line) and cut short. */
export function quote(v: unknown): string {
  if (typeof v === "string") return logSafe(v, 80);
  if (v === null || typeof v === "number" || typeof v === "boolean") return String(v);
  return logSafe(JSON.stringify(v) ?? typeName(v), 80);
}

/** `path.name`, or `path["a/b"]` when the name is not a plain identifier (label keys). */
export function child(path: string, name: string): string {
  if (identifier.test(name)) return path ? `${path}.${name}` : name;
  return `${path}[${quote(name)}]`;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An object whose listed fields pass their checks; absent and null fields are skipped unless required. */
export const object = (fields: Record<string, Check>, required: readonly string[] = []): Check => {
  // Whether each field name is a plain identifier, decided once, not per value checked.
  const entries = Object.entries(fields).map(
    ([name, check]) => [name, check, identifier.test(name)] as const,
  );
  return (value, path) => {
    if (!isObject(value)) return { field: path, message: `must be an object, got ${typeName(value)}` };
    for (const name of required) {
      // The API server reads null as unset: a required field that is null is missing.
      if (value[name] === undefined || value[name] === null)
        return { field: child(path, name), message: "is required" };
    }
    for (const [name, check, plain] of entries) {
      const item = value[name];
      if (item === undefined || item === null) continue;
      // Paths are built for a failing field only (see `unplaced`).
      if (check(item, unplaced))
        return check(item, plain ? (path ? `${path}.${name}` : name) : child(path, name));
    }
    return undefined;
  };
};

/**
 * The path a container passes to its items' checks first: nothing is built for the items that
 * pass (most of a large batch), and a failing item is checked again with its own path, which
 * gives the same problem since checks are pure. Costs a second run only on the way to an error.
 */
const unplaced = "";

/** Runs checks in order on the same value; the first problem wins. */
export const all =
  (...checks: Check[]): Check =>
  (value, path) => {
    for (const check of checks) {
      const p = check(value, path);
      if (p) return p;
    }
    return undefined;
  };

/** An array of items passing `item`, with at most `max` items when given. */
export const arrayOf =
  (item: Check, max?: number): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return { field: path, message: `must be an array, got ${typeName(value)}` };
    if (max !== undefined && value.length > max)
      return { field: path, message: `must have at most ${max} items, got ${value.length}` };
    for (let i = 0; i < value.length; i++) {
      if (item(value[i], unplaced)) return item(value[i], `${path}[${i}]`);
    }
    return undefined;
  };

export const string: Check = (v, path) =>
  typeof v === "string" ? undefined : { field: path, message: `must be a string, got ${typeName(v)}` };

export const boolean: Check = (v, path) =>
  typeof v === "boolean" ? undefined : { field: path, message: `must be a boolean, got ${typeName(v)}` };

/** An integer within [min, max]. */
export const integer =
  (min: number, max: number): Check =>
  (v, path) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : { field: path, message: `must be an integer ${min}-${max}, got ${quote(v)}` };

export const port: Check = (v, path) =>
  Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535
    ? undefined
    : { field: path, message: `must be a port number 1-65535, got ${quote(v)}` };

/** A string that follows a name rule (see names.ts); empty strings only when `allowEmpty`. */
export const named =
  (rule: NameRule, allowEmpty = false): Check =>
  (v, path) => {
    if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
    if (v === "") return allowEmpty ? undefined : { field: path, message: "must be non-empty" };
    const why = rule(v);
    return why ? { field: path, message: `${quote(v)} ${why}` } : undefined;
  };

/** One of a fixed set of strings. */
export const oneOf =
  (values: readonly string[]): Check =>
  (v, path) =>
    typeof v === "string" && values.includes(v)
      ? undefined
      : { field: path, message: `unsupported value ${quote(v)}; want one of ${values.join(", ")}` };

/** An IP address as the API server parses it (ip.ts), of `family` when given. */
export const ip =
  (family?: IpFamily): Check =>
  (v, path) => {
    if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
    if (family !== "IPv6" && isIpv4(v)) return undefined; // most addresses: no parse result to build
    const r = parseIp(v);
    if (!r.ok)
      return {
        field: path,
        message: `${quote(v)} must be a valid IP address (e.g. 10.9.8.7 or 2001:db8::ffff): ${r.reason}`,
      };
    if (family && r.family !== family)
      return { field: path, message: `${quote(v)} must be a valid ${family} address` };
    return undefined;
  };

/** A Kubernetes IntOrString port: a number 1-65535 or an IANA_SVC_NAME (targetPort). */
export const portNumOrName =
  (nameRule: NameRule): Check =>
  (v, path) =>
    typeof v === "string"
      ? named(nameRule)(v, path)
      : Number.isInteger(v)
        ? port(v, path)
        : { field: path, message: `must be an integer or a string, got ${typeName(v)}` };

/** An object of strings whose keys follow `key` and values `value`. */
export const stringMap =
  (key?: NameRule, value?: Check): Check =>
  (v, path) => {
    if (!isObject(v)) return { field: path, message: `must be an object of strings, got ${typeName(v)}` };
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const x = v[k];
      if (typeof x !== "string")
        return { field: child(path, k), message: `must be a string, got ${typeName(x)}` };
      const bad = key?.(k);
      if (bad) return { field: child(path, k), message: `key ${quote(k)} ${bad}` };
      if (value?.(x, unplaced)) return value(x, child(path, k));
    }
    return undefined;
  };
