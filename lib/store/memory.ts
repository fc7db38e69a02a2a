/**
 * In-memory Store adapter: the embedded Node default and the reference the case suite pins the
 * other adapters to. Keys are kept sorted by code point (the order SQLite and DynamoDB use for
 * UTF-8 text), so a page is a binary search plus a walk, never a scan of the whole store.
 */
import { ownValue, sharedEntry } from "./codec.ts";
import { createKeyMap } from "./key-map.ts";
import { compareKeys, createSortedKeys } from "./sorted-keys.ts";

export { compareKeys } from "./sorted-keys.ts";

import {
  applyStagedWrites,
  type DeleteOptions,
  type Entry,
  isStagedDelete,
  type ListOptions,
  type ListPage,
  type PutOptions,
  type PutResult,
  readNow,
  type StagedWrite,
  type Store,
} from "./store.ts";

/** Page size when `limit` is omitted; the memory adapter applies no cap above it. */
export const DEFAULT_LIST_LIMIT = 1000;

/**
 * A fresh, empty in-memory Store. Every operation completes before its promise settles, so each
 * compare-and-set is atomic. A put keeps the value it is given, checked once to be plain data
 * (`ownValue`: what the text-based adapters could not store is refused here too), and reads share
 * it, entry and all: nothing is copied in or out (see the read and write contracts in store.ts).
 * Under test, stored values and entries are deep-frozen so a mutation throws.
 */
export function createMemoryStore(): Store {
  /** Each key's current entry, shared with readers; replaced whole by every write (a KeyMap: it grows in small steps). */
  const slots = createKeyMap<Entry>();
  const sorted = createSortedKeys();
  const write = (key: string, value: unknown, slot = slots.get(key)): number => {
    const version = slot ? slot.version + 1 : 1;
    slots.set(key, sharedEntry(key, value, version));
    if (!slot) sorted.add(key);
    return version;
  };
  /** A staged view's entry, kept as it is when it carries the version this write gives (no new entry). */
  const adopt = (entry: Entry): void => {
    const slot = slots.get(entry.key);
    if (entry.version !== (slot ? slot.version + 1 : 1)) {
      write(entry.key, entry.value, slot);
      return;
    }
    slots.set(entry.key, entry);
    if (!slot) sorted.add(entry.key);
  };
  const remove = (key: string): boolean => {
    if (!slots.delete(key)) return false;
    sorted.delete(key);
    return true;
  };

  const store: Store = {
    async get<T>(key: string) {
      return slots.get(key) as Entry<T> | undefined;
    },

    async getMany<T>(keys: readonly string[]) {
      const out = new Map<string, Entry<T>>();
      for (const key of keys) {
        const slot = slots.get(key);
        if (slot) out.set(key, slot as Entry<T>);
      }
      return out;
    },

    async put<T>(key: string, value: T, options: PutOptions = {}): Promise<PutResult> {
      const slot = slots.get(key);
      if (options.ifVersion !== undefined && (slot?.version ?? 0) !== options.ifVersion) {
        return { ok: false, current: slot };
      }
      return { ok: true, version: write(key, ownValue(value), slot) };
    },

    async delete(key: string, options: DeleteOptions = {}) {
      const slot = slots.get(key);
      if (!slot || (options.ifVersion !== undefined && slot.version !== options.ifVersion)) return false;
      return remove(key);
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
        entries.push(slots.get(key) as Entry<T>);
      }
      return more ? { entries, cursor: entries[entries.length - 1]!.key } : { entries };
    },
  };
  // Synchronous reads for the staged view (store.ts readNow): not enumerable either.
  Object.defineProperty(store, readNow, { value: (key: string) => slots.get(key) });
  // Staged commits in bulk (store.ts applyStagedWrites): not enumerable, so spreads leave it out.
  Object.defineProperty(store, applyStagedWrites, {
    value: (writes: readonly StagedWrite[]) => {
      // An index loop: called once per slice of writes, mostly before V8 optimizes it (see writeAll).
      for (let i = 0; i < writes.length; i++) {
        const w = writes[i] as StagedWrite;
        if (isStagedDelete(w)) remove(w.key);
        else adopt(w);
      }
    },
  });
  return store;
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`store: list limit ${limit} is not a positive integer`);
  return limit;
}
