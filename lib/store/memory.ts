/**
 * In-memory Store adapter: the embedded Node default and the reference the case suite pins the
 * other adapters to. Keys are kept sorted by code point (the order SQLite and DynamoDB use for
 * UTF-8 text), so a page is a binary search plus a slice, never a scan of the whole store.
 */
import { assertPlainValue } from "./codec.ts";
import type { DeleteOptions, Entry, ListOptions, ListPage, PutOptions, PutResult, Store } from "./store.ts";

/** Page size when `limit` is omitted; the memory adapter applies no cap above it. */
export const DEFAULT_LIST_LIMIT = 1000;

interface Slot {
  value: unknown;
  version: number;
}

/**
 * A fresh, empty in-memory Store. Every operation completes before its promise settles, so each
 * compare-and-set is atomic; values are structuredClone'd on the way in and out, and a value the
 * text-based adapters could not store (see `assertPlainValue`) is refused here too.
 */
export function createMemoryStore(): Store {
  const slots = new Map<string, Slot>();
  const sorted: string[] = [];

  const entry = <T>(key: string, slot: Slot): Entry<T> => ({
    key,
    value: structuredClone(slot.value) as T,
    version: slot.version,
  });

  return {
    async get<T>(key: string) {
      const slot = slots.get(key);
      return slot && entry<T>(key, slot);
    },

    async getMany<T>(keys: readonly string[]) {
      const out = new Map<string, Entry<T>>();
      for (const key of keys) {
        const slot = slots.get(key);
        if (slot) out.set(key, entry<T>(key, slot));
      }
      return out;
    },

    async put<T>(key: string, value: T, options: PutOptions = {}): Promise<PutResult> {
      assertPlainValue(value);
      const copy = structuredClone(value);
      const slot = slots.get(key);
      if (options.ifVersion !== undefined && (slot?.version ?? 0) !== options.ifVersion) {
        return { ok: false, current: slot && entry(key, slot) };
      }
      if (slot) {
        slot.value = copy;
        slot.version += 1;
        return { ok: true, version: slot.version };
      }
      slots.set(key, { value: copy, version: 1 });
      sorted.splice(lowerBound(sorted, key), 0, key);
      return { ok: true, version: 1 };
    },

    async delete(key: string, options: DeleteOptions = {}) {
      const slot = slots.get(key);
      if (!slot || (options.ifVersion !== undefined && slot.version !== options.ifVersion)) return false;
      slots.delete(key);
      sorted.splice(lowerBound(sorted, key), 1);
      return true;
    },

    async list<T>(prefix: string, options: ListOptions = {}): Promise<ListPage<T>> {
      const limit = pageLimit(options.limit);
      const { cursor } = options;
      let i = lowerBound(sorted, prefix);
      if (cursor !== undefined && compareKeys(cursor, prefix) >= 0) i = upperBound(sorted, cursor);
      const entries: Entry<T>[] = [];
      for (; i < sorted.length && entries.length < limit; i++) {
        const key = sorted[i]!;
        if (!key.startsWith(prefix)) break;
        entries.push(entry<T>(key, slots.get(key)!));
      }
      const more = i < sorted.length && sorted[i]!.startsWith(prefix) && entries.length > 0;
      return more ? { entries, cursor: entries[entries.length - 1]!.key } : { entries };
    },
  };
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`store: list limit ${limit} is not a positive integer`);
  return limit;
}

/**
 * Orders strings by Unicode code point, which is also UTF-8 byte order. Plain `<` compares UTF-16
 * code units and would put U+10000.. (surrogate pairs) before U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates (0xD800-0xDFFF) above 0xE000-0xFFFF, keeping order within each group. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

/** First index whose key is >= `key`. */
function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sorted[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose key is > `key`. */
function upperBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sorted[mid]!, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
