/**
 * In-memory Store adapter: the embedded Node default and the reference the case suite pins the
 * other adapters to. Keys are kept sorted by code point (the order SQLite and DynamoDB use for
 * UTF-8 text), so a page is a binary search plus a walk, never a scan of the whole store.
 */
import { copyPlainValue, takeOver } from "./codec.ts";
import { compareKeys, createSortedKeys } from "./sorted-keys.ts";

export { compareKeys } from "./sorted-keys.ts";

import type { DeleteOptions, Entry, ListOptions, ListPage, PutOptions, PutResult, Store } from "./store.ts";

/** Page size when `limit` is omitted; the memory adapter applies no cap above it. */
export const DEFAULT_LIST_LIMIT = 1000;

interface Slot {
  value: unknown;
  version: number;
}

/**
 * A fresh, empty in-memory Store. Every operation completes before its promise settles, so each
 * compare-and-set is atomic; values are deep-copied (copyPlainValue) on the way in and out (on the way in, a value handed
 * over by a staged commit is kept as it is: see `handOver`), and a value the
 * text-based adapters could not store (see `assertPlainValue`) is refused here too.
 */
export function createMemoryStore(): Store {
  const slots = new Map<string, Slot>();
  const sorted = createSortedKeys();

  const entry = <T>(key: string, slot: Slot): Entry<T> => ({
    key,
    value: copyPlainValue(slot.value as T),
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
      const slot = slots.get(key);
      if (options.ifVersion !== undefined && (slot?.version ?? 0) !== options.ifVersion) {
        return { ok: false, current: slot && entry(key, slot) };
      }
      const copy = takeOver(value);
      if (slot) {
        slot.value = copy;
        slot.version += 1;
        return { ok: true, version: slot.version };
      }
      slots.set(key, { value: copy, version: 1 });
      sorted.add(key);
      return { ok: true, version: 1 };
    },

    async delete(key: string, options: DeleteOptions = {}) {
      const slot = slots.get(key);
      if (!slot || (options.ifVersion !== undefined && slot.version !== options.ifVersion)) return false;
      slots.delete(key);
      sorted.delete(key);
      return true;
    },

    async list<T>(prefix: string, options: ListOptions = {}): Promise<ListPage<T>> {
      const limit = pageLimit(options.limit);
      const { cursor } = options;
      const walk =
        cursor !== undefined && compareKeys(cursor, prefix) >= 0
          ? sorted.from(cursor)
          : sorted.fromInclusive(prefix);
      const entries: Entry<T>[] = [];
      let more = false;
      for (const key of walk) {
        if (!key.startsWith(prefix)) break;
        if (entries.length === limit) {
          more = true;
          break;
        }
        entries.push(entry<T>(key, slots.get(key)!));
      }
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
