/**
 * The Store port: a key-value store with per-key versions and compare-and-set.
 * Every pipeline stage reads and writes mesh state only through this interface, so the
 * memory, Durable Object and DynamoDB adapters are interchangeable.
 *
 * Values are plain data: JSON types plus Uint8Array, nested freely.
 *
 * Read contract: a value (and entry) read from a Store is READ-ONLY and may be shared with the
 * store and with every other reader: never mutate it, copy what you want to change (spread,
 * `[...list]`). The in-process adapters (memory, the staged view) return their stored value itself,
 * deep-frozen (see codec.ts `ownValue`), so a mutation throws a TypeError instead of changing the
 * store; bytes (Uint8Array) cannot be frozen and are shared as they are: never write into them.
 * Adapters that decode (SQL file, Durable Object) return fresh values. Reads cost no copy, which
 * is what makes ingest and the publish cheap on the memory store.
 *
 * Write contract: `put` never keeps the caller's object: it keeps a copy it owns (or the value
 * itself when it is one a store owns already, e.g. one it read or a staged view's), so mutating a
 * value after putting it changes nothing stored.
 */

import { ownValue, sharedEntry } from "./codec.ts";

/** A stored value with its version. Versions start at 1 and grow by one on each write. */
export interface Entry<T = unknown> {
  readonly key: string;
  /** Read-only, possibly shared (see the read contract above). */
  readonly value: T;
  readonly version: number;
}

export interface PutOptions {
  /**
   * Compare-and-set: write only if the key's current version equals this. 0 means
   * "only if the key does not exist". Omitted: write unconditionally.
   */
  ifVersion?: number;
}

export type PutResult = { ok: true; version: number } | { ok: false; current: Entry | undefined };

export interface DeleteOptions {
  /** Delete only if the key's current version equals this. */
  ifVersion?: number;
}

export interface ListOptions {
  /** At most this many entries per page (adapters may cap it; default 1000). */
  limit?: number;
  /** Resume after this key (the `cursor` a previous page returned). */
  cursor?: string;
}

export interface ListPage<T = unknown> {
  /** Entries in ascending key order. */
  entries: Entry<T>[];
  /** Present when more entries may follow: pass it back as `cursor`. */
  cursor?: string;
}

export interface Store {
  get<T = unknown>(key: string): Promise<Entry<T> | undefined>;
  /** Missing keys are absent from the map. */
  getMany<T = unknown>(keys: readonly string[]): Promise<Map<string, Entry<T>>>;
  put<T = unknown>(key: string, value: T, options?: PutOptions): Promise<PutResult>;
  /** True when something was deleted. */
  delete(key: string, options?: DeleteOptions): Promise<boolean>;
  /** Keys starting with `prefix`, ascending, one page at a time. */
  list<T = unknown>(prefix: string, options?: ListOptions): Promise<ListPage<T>>;
}

/**
 * The optional capability of an in-process Store to take writes in bulk: every write applied
 * synchronously, unconditionally, as put/delete would (versions included), values as they are
 * (the caller checked and owns them: `ownValue`). The staged view's commit (staged.ts) and
 * `writeAll` (the flush's publish) use it when the store has it, a slice of writes per call,
 * instead of one awaited call per key. It is
 * keyed by a symbol and not enumerable, so a wrapper built by spreading a store (`{...store, put}`)
 * does not inherit it and sees every write through its own methods.
 */
export const applyStagedWrites: unique symbol = Symbol("store.applyStagedWrites");

/**
 * One staged write: a put is the entry the view built for it (key, value, and the version the view
 * gave it, which the base may keep as its own entry when its own count gives the same version, so a
 * commit allocates nothing per key), a delete is `{ key, deleted: true }`.
 */
export type StagedWrite = Entry | StagedDelete;

/** A staged delete (see StagedWrite). */
export interface StagedDelete {
  readonly key: string;
  readonly deleted: true;
}

/** Whether a staged write (or a writeAll Write) is a delete. */
export function isStagedDelete(w: StagedWrite | Write): w is StagedDelete {
  return (w as Partial<StagedDelete>).deleted === true;
}

/** A Store with the bulk capability. */
export interface BulkWritable {
  [applyStagedWrites](writes: readonly StagedWrite[]): void;
}

/** Whether `store` takes staged writes in bulk. */
export function isBulkWritable(store: Store): store is Store & BulkWritable {
  return typeof (store as Partial<BulkWritable>)[applyStagedWrites] === "function";
}

/**
 * The optional capability of an in-process Store to read one key synchronously: the entry `get`
 * would resolve to, under the same read contract. The staged view (staged.ts) reads its base
 * through it when the base has it, so a read of a key it does not hold costs no promise chain.
 * Keyed by a symbol and not enumerable, like applyStagedWrites.
 */
export const readNow: unique symbol = Symbol("store.readNow");

/** A Store with the synchronous read capability. */
export interface SyncReadable {
  [readNow](key: string): Entry | undefined;
}

/** Whether `store` reads synchronously. */
export function isSyncReadable(store: Store): store is Store & SyncReadable {
  return typeof (store as Partial<SyncReadable>)[readNow] === "function";
}

/** Thrown when a compare-and-set loop gives up: the key kept changing under it. */
export class ConflictError extends Error {
  constructor(
    readonly key: string,
    readonly attempts: number,
  ) {
    super(`store: key ${key} kept changing; gave up after ${attempts} attempts`);
    this.name = "ConflictError";
  }
}

/**
 * Every entry under a prefix, following cursors to the end. `pace` (lib/pace.ts) is awaited between
 * pages: over an in-process store the pages come without any I/O, so a long prefix would otherwise
 * be listed in one step of the event loop.
 */
export async function listAll<T = unknown>(
  store: Store,
  prefix: string,
  pace?: () => Promise<void>,
): Promise<Entry<T>[]> {
  const first: ListPage<T> = await store.list<T>(prefix);
  if (first.cursor === undefined) return first.entries; // one page (most prefixes): no copy
  const out: Entry<T>[] = [...first.entries];
  let cursor: string | undefined = first.cursor;
  do {
    await pace?.();
    const page: ListPage<T> = await store.list<T>(prefix, { cursor });
    for (const e of page.entries) out.push(e);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}

/** One write of writeAll: a put of `value` (handed over, as to put), or a delete. */
export type Write = { readonly key: string; readonly value: unknown } | StagedDelete;

/**
 * Puts and deletes `writes` unconditionally, in order, exactly as one awaited put or delete each
 * would (the same versions, values handed over as to put, refused as put refuses them). A store
 * that takes writes in bulk (in-process: applyStagedWrites) gets them in one synchronous call, no
 * promise per key; any other store (file, Durable Object, DynamoDB) one awaited call per key, in order.
 */
export async function writeAll(store: Store, writes: readonly Write[]): Promise<void> {
  if (!isBulkWritable(store)) {
    for (const w of writes) {
      if (isStagedDelete(w)) await store.delete(w.key);
      else await store.put(w.key, w.value);
    }
    return;
  }
  // Owned and checked first, all of them: a refused value leaves the store as it was.
  const read = isSyncReadable(store) ? store[readNow].bind(store) : undefined;
  const bulk: StagedWrite[] = [];
  // An index loop: called once per flush chunk, mostly before V8 optimizes it, when a for-of
  // allocates an iterator result per write.
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i] as Write;
    // The version put would give (the store keeps such an entry as it is); a wrong guess is rewritten.
    if (isStagedDelete(w)) bulk.push(w);
    else bulk.push(sharedEntry(w.key, ownValue(w.value), (read?.(w.key)?.version ?? 0) + 1));
  }
  store[applyStagedWrites](bulk);
}

/**
 * Read-modify-write with compare-and-set, retried when another writer got there first.
 * `change` gets the current entry (or undefined) and returns the new value, or `undefined`
 * to leave the key alone, or `null` to delete it. Returns what `change` returned.
 */
export async function update<T>(
  store: Store,
  key: string,
  change: (current: Entry<T> | undefined) => T | null | undefined,
  maxAttempts = 16,
): Promise<T | null | undefined> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const current = await store.get<T>(key);
    const next = change(current);
    if (next === undefined) return undefined;
    const ifVersion = current?.version ?? 0;
    if (next === null) {
      if (!current || (await store.delete(key, { ifVersion }))) return null;
      continue;
    }
    const result = await store.put(key, next, { ifVersion });
    if (result.ok) return next;
  }
  throw new ConflictError(key, maxAttempts);
}
