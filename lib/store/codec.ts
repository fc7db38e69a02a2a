/**
 * Text encoding of store values (JSON data plus Uint8Array, nested anywhere), for adapters that
 * persist or transmit strings. Bytes become `{"$bytes": "<base64>"}`; an object key that starts
 * with "$" gets one more "$" in front, so a lone "$bytes" key can only mean bytes and every value
 * round-trips exactly. No Buffer: runs unchanged on Node and workerd.
 */

const BYTES = "$bytes";

/**
 * Encodes a store value as a string that `decodeValue` turns back into an equal value.
 * Object properties that are undefined are left out (as JSON.stringify does). Throws TypeError,
 * naming where, on anything else that is not plain data: undefined as the value or in an array,
 * non-finite numbers, bigint, functions, Dates, Maps, class instances.
 */
export function encodeValue(value: unknown): string {
  return JSON.stringify(guarded(value, toJson));
}

/** Decodes a string produced by `encodeValue`. */
export function decodeValue<T = unknown>(text: string): T {
  return JSON.parse(text, revive) as T;
}

/**
 * Throws the TypeError `encodeValue` would throw, without encoding: lets adapters that never
 * serialize (memory) refuse exactly what the serializing ones refuse.
 */
export function assertPlainValue(value: unknown): void {
  guarded(value, check);
}

/**
 * A deep copy of a plain value that shares nothing with it (bytes copied into fresh Uint8Arrays),
 * refusing exactly what `assertPlainValue` refuses, with the same error. One walk, no
 * serialization: the memory adapter and the staged view copy every value in and out with it,
 * several times cheaper than structuredClone plus a separate check for the small records ingest
 * writes.
 */
export function copyPlainValue<T>(value: T): T {
  try {
    return copyFast(value) as T;
  } catch (e) {
    if (!(e instanceof NotPlainData)) throw e;
    assertPlainValue(value); // the slow walk names where
    throw new TypeError(`store: value ${e.message}`);
  }
}

/** Values handed from one store to another without a copy (see `handOver`). */
const handedOver = new WeakSet<object>();

/**
 * Marks `value`, a copy its holder made with copyPlainValue and that nothing else references or
 * will ever touch again, as given away: the next `takeOver` of it keeps it instead of copying it.
 * The staged view hands its private copies to the base on commit, so a value committed to the
 * memory store is copied once on the way in, not twice. Returns `value`.
 */
export function handOver<T>(value: T): T {
  if (typeof value === "object" && value !== null) handedOver.add(value);
  return value;
}

/**
 * What a store keeps of a value it was given: the value itself when it was handed over (once;
 * the mark is consumed), else a copyPlainValue copy.
 */
export function takeOver<T>(value: T): T {
  if (typeof value === "object" && value !== null && handedOver.delete(value)) return value;
  return copyPlainValue(value);
}

function copyFast(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new NotPlainData(`is ${value}, which JSON cannot hold`);
      return value;
    case "object": {
      if (value === null) return value;
      if (value instanceof Uint8Array) return new Uint8Array(value);
      if (Array.isArray(value)) {
        const out = new Array(value.length);
        for (let i = 0; i < value.length; i++) out[i] = copyFast(value[i]);
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new NotPlainData("is not plain data");
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        const copy = item === undefined ? undefined : copyFast(item);
        if (key === "__proto__")
          Object.defineProperty(out, key, {
            value: copy,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else out[key] = copy;
      }
      return out;
    }
    default:
      throw new NotPlainData("is not plain data");
  }
}

/** Raised deep inside a walk; each level on the way out adds its segment to `path`. */
class NotPlainData extends Error {
  readonly path: string[] = [];
}

function guarded<R>(value: unknown, walk: (value: unknown) => R): R {
  try {
    return walk(value);
  } catch (e) {
    if (e instanceof NotPlainData) throw new TypeError(`store: value${e.path.join("")} ${e.message}`);
    throw e;
  }
}

function within<R>(segment: string, walk: (value: unknown) => R, value: unknown): R {
  try {
    return walk(value);
  } catch (e) {
    if (e instanceof NotPlainData) e.path.unshift(segment);
    throw e;
  }
}

type Kind = "leaf" | "bytes" | "array" | "object";

function kindOf(value: unknown): Kind {
  switch (typeof value) {
    case "string":
    case "boolean":
      return "leaf";
    case "number":
      if (!Number.isFinite(value)) throw new NotPlainData(`is ${value}, which JSON cannot hold`);
      return "leaf";
    case "object": {
      if (value === null) return "leaf";
      if (value instanceof Uint8Array) return "bytes";
      if (Array.isArray(value)) return "array";
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return "object";
      throw new NotPlainData(`is a ${proto?.constructor?.name ?? "non-plain object"}, not plain data`);
    }
    case "undefined":
      throw new NotPlainData("is undefined; store null, or leave the key out of an object");
    default:
      throw new NotPlainData(`is a ${typeof value}, not plain data`);
  }
}

function toJson(value: unknown): unknown {
  switch (kindOf(value)) {
    case "leaf":
      return value;
    case "bytes":
      return { [BYTES]: bytesToBase64(value as Uint8Array) };
    case "array":
      return Array.from(value as unknown[], (item, i) => within(`[${i}]`, toJson, item));
    case "object": {
      const entries: [string, unknown][] = [];
      for (const [key, item] of Object.entries(value as object)) {
        if (item === undefined) continue; // like JSON.stringify: the key is dropped
        entries.push([key.startsWith("$") ? `$${key}` : key, within(`.${key}`, toJson, item)]);
      }
      return Object.fromEntries(entries);
    }
  }
}

function check(value: unknown): void {
  const kind = kindOf(value);
  if (kind === "array") Array.from(value as unknown[], (item, i) => within(`[${i}]`, check, item));
  if (kind === "object") {
    for (const [key, item] of Object.entries(value as object)) {
      if (item !== undefined) within(`.${key}`, check, item);
    }
  }
}

function revive(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const record = value as Record<string, unknown>;
  if (keys.length === 1 && keys[0] === BYTES && typeof record[BYTES] === "string") {
    return base64ToBytes(record[BYTES]);
  }
  if (!keys.some((key) => key.startsWith("$"))) return value;
  return Object.fromEntries(keys.map((key) => [key.startsWith("$") ? key.slice(1) : key, record[key]]));
}

const CHUNK = 0x8000;

/** Standard base64 (with padding) of the bytes a view covers. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/** Inverse of `bytesToBase64`; throws on text that is not base64. */
export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
