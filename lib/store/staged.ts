/**
 * A staged view of a Store: writes and deletes are kept aside and every read sees them first, so
 * a batch can run against it exactly as against the store itself, then be committed once or
 * dropped whole. This is how ingest makes a batch all or nothing on every adapter (memory, the
 * Durable Object over RPC, DynamoDB) without asking them for transactions.
 *
 * Semantics inside the view are the Store port's, to the version (the shared case suite runs over
 * it): compare-and-set decides against the staged state, a key deleted and created again starts
 * at version 1, and `list` merges the base's sorted pages with staged keys (staged values win,
 * staged deletes hide base keys).
 *
 * Concurrency: keys not staged are read from the base when asked, except that a key the base did
 * not hold is remembered as absent for the rest of the batch (a batch mostly reads, then writes,
 * keys that do not exist yet: one base read instead of two). `commit` writes each staged key
 * unconditionally (last writer wins per key), as the unstaged code did; ingest runs one batch at a
 * time per instance, and two instances committing at once interleave key by key. Values are
 * checked (`assertPlainValue`'s rules, see `ownValue`) when staged, so a commit fails only if the
 * base itself fails; then the writes it made are undone (best effort) and a CommitError says
 * whether that worked.
 *
 * Values follow the Store port's contracts (store.ts): a put takes ownership of its value, reads
 * share what was staged or what the base returned, and a commit hands the staged values to the
 * base as they are (no copy on the memory store).
 */

import { createChunkList } from "./chunk-list.ts";
import { ownValue, sharedEntry } from "./codec.ts";
import { createKeyMap } from "./key-map.ts";
import { compareKeys, createSortedKeys } from "./sorted-keys.ts";
import { type CommitOptions, commitStaged, type StagedSlot } from "./staged-commit.ts";
import {
  type DeleteOptions,
  type Entry,
  isSyncReadable,
  type ListOptions,
  type ListPage,
  type PutOptions,
  type PutResult,
  readNow,
  type Store,
  type SyncReadable,
} from "./store.ts";

export { CommitError, type CommitOptions } from "./staged-commit.ts";

/** Page size when `list` gets no limit, as the adapters. */
const defaultLimit = 1000;

/** A Store that holds its writes until `commit`; dropping it unused applies nothing. */
export interface StagedStore extends Store {
  /** Distinct keys written or deleted so far. */
  readonly staged: number;
  /** Writes every staged change to the base, once; returns how many keys it wrote or deleted. */
  commit(options?: CommitOptions): Promise<number>;
}

/** What the view knows of a key (staged-commit.ts). */
type Slot = StagedSlot;

/** A key the base was asked for and did not hold (not staged since). */
const missing: Slot = Object.freeze({ entry: undefined, staged: false, before: undefined });

/** A fresh staged view over `base`; the base is untouched until `commit`. */
export function createStagedStore(base: Store): StagedStore {
  /** Staged keys, and keys the base did not hold; keys the base holds are read from it each time. */
  const known = createKeyMap<Slot>();
  /** Staged keys in the order first staged (commit order within a rank). */
  const stagedKeys = createChunkList<string>();
  /** Their slots, index for index (commit reads them without a lookup). */
  const stagedSlots = createChunkList<Slot>();
  /** Staged keys in key order, for `list`. */
  const order = createSortedKeys();
  let committed = false;

  const open = () => {
    if (committed) throw new Error("store: this staged view was committed already");
  };
  /**
   * Runs `act` on the key's state in the view, synchronously after the one read it may need, so
   * concurrent calls on one key decide in one order (compare-and-set stays atomic in the view).
   */
  const withCurrent = <R>(key: string, act: (cur: Slot) => R): R | Promise<R> => {
    const slot = known.get(key);
    if (slot) return act(slot);
    if (syncBase) {
      const e = readBaseNow(syncBase, key);
      return act(e ? { entry: e, staged: false, before: undefined } : missing);
    }
    return readBase(key).then((e) =>
      act(known.get(key) ?? (e ? { entry: e, staged: false, before: undefined } : missing)),
    );
  };
  const syncBase = isSyncReadable(base) ? base : undefined;
  /** Reads a key the view does not know from an in-process base, remembering it absent. */
  const readBaseNow = (sync: SyncReadable, key: string): Entry | undefined => {
    const e = sync[readNow](key);
    if (e === undefined) known.set(key, missing);
    return e;
  };
  const readBase = async <T>(key: string): Promise<Entry<T> | undefined> => {
    const e = await base.get<T>(key);
    if (e === undefined && !known.has(key)) known.set(key, missing);
    return e;
  };
  /** A key staged again keeps its slot (only staged slots are ever changed in place): no new slot, no Map write. */
  const stage = (key: string, entry: Entry | undefined, cur: Slot) => {
    if (cur.staged) {
      cur.entry = entry;
      return;
    }
    const slot: Slot = { entry, staged: true, before: cur };
    known.set(key, slot);
    stagedKeys.push(key);
    stagedSlots.push(slot);
    order.add(key);
  };

  return {
    get staged() {
      return stagedKeys.length;
    },

    async get<T>(key: string) {
      open();
      const slot = known.get(key);
      if (slot) return slot.entry as Entry<T> | undefined;
      if (syncBase) return readBaseNow(syncBase, key) as Entry<T> | undefined;
      const e = await readBase<T>(key);
      const late = known.get(key);
      return late?.staged ? (late.entry as Entry<T> | undefined) : e;
    },

    async getMany<T>(keys: readonly string[]) {
      open();
      if (syncBase) {
        const out = new Map<string, Entry<T>>();
        for (const key of keys) {
          const e = known.has(key) ? (known.get(key) as Slot).entry : readBaseNow(syncBase, key);
          if (e) out.set(key, e as Entry<T>);
        }
        return out;
      }
      const asked = keys.filter((k) => !known.has(k));
      const fromBase = asked.length === 0 ? undefined : await base.getMany<T>(asked);
      const out = new Map<string, Entry<T>>();
      for (const key of keys) {
        const slot = known.get(key);
        const e = slot ? slot.entry : fromBase?.get(key);
        if (e) out.set(key, e as Entry<T>);
        else if (!slot) known.set(key, missing);
      }
      return out;
    },

    async put<T>(key: string, value: T, options: PutOptions = {}): Promise<PutResult> {
      open();
      const owned = ownValue(value);
      return withCurrent(key, (cur): PutResult => {
        const version = cur.entry?.version ?? 0;
        if (options.ifVersion !== undefined && version !== options.ifVersion) {
          return { ok: false, current: cur.entry };
        }
        stage(key, sharedEntry(key, owned, version + 1), cur);
        return { ok: true, version: version + 1 };
      });
    },

    async delete(key: string, options: DeleteOptions = {}) {
      open();
      return withCurrent(key, (cur) => {
        if (!cur.entry || (options.ifVersion !== undefined && cur.entry.version !== options.ifVersion))
          return false;
        stage(key, undefined, cur);
        return true;
      });
    },

    async list<T>(prefix: string, options: ListOptions = {}): Promise<ListPage<T>> {
      open();
      const limit = options.limit ?? defaultLimit;
      if (!Number.isInteger(limit) || limit < 1)
        throw new RangeError(`store: list limit ${limit} is not a positive integer`);
      let after =
        options.cursor !== undefined && compareKeys(options.cursor, prefix) >= 0 ? options.cursor : undefined;
      const out: Entry<T>[] = [];
      for (;;) {
        const page = await base.list<T>(prefix, after === undefined ? { limit } : { limit, cursor: after });
        const end = page.cursor;
        const mine: Entry<T>[] = [];
        for (const key of after === undefined ? order.fromInclusive(prefix) : order.from(after)) {
          if (!key.startsWith(prefix) || (end !== undefined && compareKeys(key, end) > 0)) break;
          const entry = (known.get(key) as Slot).entry;
          if (entry) mine.push(entry as Entry<T>);
        }
        const theirs = page.entries.some((e) => known.get(e.key)?.staged === true)
          ? page.entries.filter((e) => known.get(e.key)?.staged !== true)
          : page.entries;
        const merged = mine.length === 0 ? theirs : mergeByKey(theirs, mine);
        // One page, nothing to cut: the merged list itself (every adapter builds its page fresh).
        if (out.length === 0 && end === undefined && merged.length <= limit) return { entries: merged };
        for (const e of merged) {
          out.push(e);
          if (out.length > limit) {
            out.pop();
            return { entries: out, cursor: (out[out.length - 1] as Entry<T>).key };
          }
        }
        if (end === undefined) return { entries: out };
        after = end;
      }
    },

    async commit(options: CommitOptions = {}) {
      open();
      committed = true;
      return commitStaged(base, stagedKeys, stagedSlots, options);
    },
  };
}

/** Merges two key-ordered entry lists with no key in common. */
function mergeByKey<T>(a: readonly Entry<T>[], b: readonly Entry<T>[]): Entry<T>[] {
  const out: Entry<T>[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && compareKeys((a[i] as Entry<T>).key, (b[j] as Entry<T>).key) < 0))
      out.push(a[i++] as Entry<T>);
    else out.push(b[j++] as Entry<T>);
  }
  return out;
}
