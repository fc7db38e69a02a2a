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
 * Whether stores deep-freeze the values they take (see `ownValue`). On under test (vitest sets
 * VITEST) and when NODE_ENV is "development" or "test", so a writer or reader that breaks the
 * Store port's contract (store.ts) by mutating a stored value throws a TypeError there; off in
 * production, where freezing would cost as much as the copy it replaces.
 */
let freezing = freezingByDefault();

function freezingByDefault(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return (
    env !== undefined &&
    (env.VITEST !== undefined || env.NODE_ENV === "development" || env.NODE_ENV === "test")
  );
}

/** Turns freezing on or off (tests of both modes; hosts that want the check in production). Returns the previous setting. */
export function setStoreFreezing(on: boolean): boolean {
  const was = freezing;
  freezing = on;
  return was;
}

/**
 * What an in-process store keeps of a value it is given: the value itself, without a copy (a put
 * takes ownership: see the write contract in store.ts), once checked to be plain data — it refuses
 * exactly what `assertPlainValue` refuses, with the same error, in one walk that allocates
 * nothing. With freezing on (dev and test, see `setStoreFreezing`) every object and array in it is
 * frozen too (bytes cannot be), so a later mutation throws instead of changing the store.
 */
export function ownValue<T>(value: T): T {
  const passed: object[] = [];
  try {
    checkPlain(value, passed);
  } catch (e) {
    if (!(e instanceof NotPlainData)) throw e;
    assertPlainValue(value); // the slow walk names where
    throw new TypeError(`store: value ${e.message}`);
  }
  for (const item of passed) ownedItems.add(item);
  if (freezing) deepFreeze(value); // after the check: a refused value is left as it was
  return value;
}

/** An entry as a store hands it out: frozen when freezing is on (the entry is shared like its value). */
export function sharedEntry<T>(
  key: string,
  value: T,
  version: number,
): { key: string; value: T; version: number } {
  const entry = { key, value, version };
  return freezing ? Object.freeze(entry) : entry;
}

/** Arrays at least this long have their object items remembered once a value holding them was owned. */
const rememberedLength = 32;

/**
 * Object items of long arrays in values a store took (see `ownValue`): plain data then, and never
 * changed since, by the Store port's contracts (a put hands its value over; what is read is
 * read-only). A shard or a bucket rewritten with one item changed keeps the others, read from the
 * store: they are not walked again, so a write costs the items it changed, not the whole list.
 * Weak: items dropped from every value are collected as ever.
 */
const ownedItems = new WeakSet<object>();

/**
 * Throws NotPlainData (without a path) on anything that is not plain data; allocates nothing but
 * the list of long arrays' object items that passed (`passed`, remembered by the caller only once
 * the whole value passed: a refused value's items stay the caller's, free to change).
 */
function checkPlain(value: unknown, passed: object[]): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new NotPlainData("is not plain data");
      return;
    case "object": {
      if (value === null || value instanceof Uint8Array) return;
      if (Array.isArray(value)) {
        if (value.length < rememberedLength) {
          for (let i = 0; i < value.length; i++) checkPlain(value[i], passed);
          return;
        }
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (typeof item !== "object" || item === null) checkPlain(item, passed);
          else if (!ownedItems.has(item)) {
            checkPlain(item, passed);
            passed.push(item);
          }
        }
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new NotPlainData("is not plain data");
      for (const key in value) {
        const item = (value as Record<string, unknown>)[key];
        if (item !== undefined) checkPlain(item, passed);
      }
      return;
    }
    default:
      throw new NotPlainData("is not plain data");
  }
}

/** Freezes every object and array in a value checkPlain passed. */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  Object.freeze(value);
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
