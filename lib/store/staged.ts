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
 * checked (`assertPlainValue`) when staged, so a commit fails only if the base itself fails; then
 * the writes it made are undone (best effort) and a CommitError says whether that worked.
 */
import { copyPlainValue, handOver } from "./codec.ts";
import { compareKeys, createSortedKeys } from "./sorted-keys.ts";
import type { DeleteOptions, Entry, ListOptions, ListPage, PutOptions, PutResult, Store } from "./store.ts";

/** Page size when `list` gets no limit, as the adapters. */
const defaultLimit = 1000;

export interface CommitOptions {
  /**
   * Orders the writes: lower ranks first, staging order within a rank. Ingest writes state first,
   * then version records, then the queued push, so a reader never sees a push before its state.
   */
  rank?: (key: string) => number;
  /** Awaited between writes, so a large commit can yield to the event loop (see lib/pace.ts). */
  pace?: () => Promise<void>;
}

/** A Store that holds its writes until `commit`; dropping it unused applies nothing. */
export interface StagedStore extends Store {
  /** Distinct keys written or deleted so far. */
  readonly staged: number;
  /** Writes every staged change to the base, once; returns how many keys it wrote or deleted. */
  commit(options?: CommitOptions): Promise<number>;
}

interface Slot {
  present: boolean;
  value: unknown;
  version: number;
}

const missing: Slot = Object.freeze({ present: false, value: undefined, version: 0 });

/** A fresh staged view over `base`; the base is untouched until `commit`. */
export function createStagedStore(base: Store): StagedStore {
  const slots = new Map<string, Slot>();
  /** What the base held of each staged key when it was first staged, to roll a failed commit back. */
  const originals = new Map<string, Slot>();
  const order = createSortedKeys();
  /** Keys the base was asked for and did not hold (not staged since). */
  const absent = new Set<string>();
  let committed = false;

  const open = () => {
    if (committed) throw new Error("store: this staged view was committed already");
  };
  const entry = <T>(key: string, slot: Slot): Entry<T> => ({
    key,
    value: copyPlainValue(slot.value as T),
    version: slot.version,
  });
  /**
   * Runs `act` on the key's state in the view, synchronously after the one read it may need, so
   * concurrent calls on one key decide in one order (compare-and-set stays atomic in the view).
   */
  const withCurrent = async <R>(key: string, act: (cur: Slot) => R): Promise<R> => {
    const staged = slots.get(key);
    if (staged) return act(staged);
    if (absent.has(key)) return act(missing);
    const e = await readBase(key);
    return act(slots.get(key) ?? { present: e !== undefined, value: e?.value, version: e?.version ?? 0 });
  };
  const readBase = async <T>(key: string): Promise<Entry<T> | undefined> => {
    const e = await base.get<T>(key);
    if (e === undefined) absent.add(key);
    return e;
  };
  const stage = (key: string, slot: Slot, before: Slot) => {
    if (!slots.has(key)) originals.set(key, before);
    slots.set(key, slot);
    absent.delete(key);
    order.add(key);
  };

  return {
    get staged() {
      return slots.size;
    },

    async get<T>(key: string) {
      open();
      const slot = slots.get(key);
      if (slot) return slot.present ? entry<T>(key, slot) : undefined;
      if (absent.has(key)) return undefined;
      const e = await readBase<T>(key);
      const late = slots.get(key);
      if (late) return late.present ? entry<T>(key, late) : undefined;
      return e;
    },

    async getMany<T>(keys: readonly string[]) {
      open();
      const asked = keys.filter((k) => !slots.has(k) && !absent.has(k));
      const fromBase = asked.length === 0 ? new Map<string, Entry<T>>() : await base.getMany<T>(asked);
      for (const key of asked) if (!fromBase.has(key) && !slots.has(key)) absent.add(key);
      const out = new Map<string, Entry<T>>();
      for (const key of keys) {
        const slot = slots.get(key);
        if (slot) {
          if (slot.present) out.set(key, entry<T>(key, slot));
        } else {
          const e = fromBase.get(key);
          if (e) out.set(key, e);
        }
      }
      return out;
    },

    async put<T>(key: string, value: T, options: PutOptions = {}): Promise<PutResult> {
      open();
      const copy = copyPlainValue(value);
      return withCurrent(key, (cur): PutResult => {
        if (options.ifVersion !== undefined && cur.version !== options.ifVersion) {
          return { ok: false, current: cur.present ? entry(key, cur) : undefined };
        }
        const version = cur.present ? cur.version + 1 : 1;
        stage(key, { present: true, value: copy, version }, cur);
        return { ok: true, version };
      });
    },

    async delete(key: string, options: DeleteOptions = {}) {
      open();
      return withCurrent(key, (cur) => {
        if (!cur.present || (options.ifVersion !== undefined && cur.version !== options.ifVersion))
          return false;
        stage(key, { present: false, value: undefined, version: 0 }, cur);
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
          const slot = slots.get(key) as Slot;
          if (slot.present) mine.push(entry<T>(key, slot));
        }
        const theirs = page.entries.filter((e) => !slots.has(e.key));
        for (const e of mergeByKey(theirs, mine)) {
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
      // Bucketed by rank in staging order (no sort: a commit may hold hundreds of thousands of keys).
      const rank = options.rank ?? (() => 0);
      const buckets = new Map<number, [string, Slot][]>();
      for (const pair of slots) {
        await options.pace?.();
        const r = rank(pair[0]);
        const bucket = buckets.get(r);
        if (bucket) bucket.push(pair);
        else buckets.set(r, [pair]);
      }
      const writes = [...buckets.keys()]
        .sort((a, b) => a - b)
        .flatMap((r) => buckets.get(r) as [string, Slot][]);
      const done: string[] = [];
      try {
        for (const [key, slot] of writes) {
          // The slot's value is the view's private copy and the view is closed: hand it over.
          if (slot.present) await base.put(key, handOver(slot.value));
          else await base.delete(key);
          done.push(key);
          await options.pace?.();
        }
      } catch (err) {
        throw await rollBack(base, done, originals, err);
      }
      return writes.length;
    },
  };
}

/**
 * Undoes the writes a failed commit made, newest first, restoring what the base held (values, not
 * version numbers); returns the error to throw, saying whether the rollback itself failed.
 */
async function rollBack(base: Store, done: readonly string[], originals: Map<string, Slot>, cause: unknown) {
  let failed = 0;
  for (const key of [...done].reverse()) {
    const before = originals.get(key) as Slot;
    try {
      if (before.present) await base.put(key, handOver(before.value));
      else await base.delete(key);
    } catch {
      failed++;
    }
  }
  const what = cause instanceof Error ? cause.message : String(cause);
  return new CommitError(
    failed === 0
      ? `store: commit failed after ${done.length} write(s) and was rolled back: ${what}`
      : `store: commit failed after ${done.length} write(s); rolling back failed for ${failed}: ${what}`,
    failed === 0,
    cause,
  );
}

/** A commit that failed in the base; `rolledBack` says whether the base holds what it held before. */
export class CommitError extends Error {
  constructor(
    message: string,
    readonly rolledBack: boolean,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = "CommitError";
  }
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
