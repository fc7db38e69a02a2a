/**
 * The commit of a staged view (staged.ts): every staged write handed to the base, ordered by rank,
 * in slices with the pace between them; over a base that answers over the network, a failed write
 * undoes the ones made before it (best effort) and a CommitError says whether that worked.
 */
import { type ChunkList, createChunkList } from "./chunk-list.ts";
import { applyStagedWrites, type Entry, isBulkWritable, type StagedWrite, type Store } from "./store.ts";

/** Writes per synchronous call to a base that takes them in bulk (well under a millisecond). */
const bulkSlice = 1024;

/** Writes in flight at once when the base is not in-process (one awaited call per key otherwise). */
const asyncWindow = 16;

export interface CommitOptions {
  /**
   * Orders the writes: lower ranks first, staging order within a rank. Ingest writes state first,
   * then version records, then the queued push, so a reader never sees a push before its state.
   */
  rank?: (key: string) => number;
  /** Awaited between writes, so a large commit can yield to the event loop (see lib/pace.ts). */
  pace?: () => Promise<void>;
}

/**
 * What a staged view knows of a key: its entry in the view (undefined: absent), whether the view
 * wrote it, and for a staged key what the base held when it was first staged (to roll a commit back).
 */
export interface StagedSlot {
  entry: Entry | undefined;
  staged: boolean;
  before: StagedSlot | undefined;
}

/**
 * Writes the staged keys (`keys`, their `slots` index for index) to `base`; returns how many.
 * Bucketed by rank in staging order (no sort: a commit may hold hundreds of thousands of keys) and
 * walked a slice at a time, so no step builds or copies a list of every write.
 */
export async function commitStaged(
  base: Store,
  keys: ChunkList<string>,
  slots: ChunkList<StagedSlot>,
  options: CommitOptions,
): Promise<number> {
  const rank = options.rank ?? (() => 0);
  // Indexes into keys/slots.
  const buckets = new Map<number, ChunkList<number>>();
  for (let i = 0; i < keys.length; i++) {
    if (i % bulkSlice === 0) await options.pace?.();
    const r = rank(keys.at(i));
    let bucket = buckets.get(r);
    if (!bucket) {
      bucket = createChunkList<number>();
      buckets.set(r, bucket);
    }
    bucket.push(i);
  }
  const ranks = [...buckets.keys()].sort((a, b) => a - b).map((r) => buckets.get(r) as ChunkList<number>);
  if (isBulkWritable(base)) {
    // In-process base: slices of writes applied synchronously, nothing awaited but the pace.
    // The view's own entries go as they are (the base may keep them): nothing allocated per put.
    for (const bucket of ranks) {
      for (let at = 0; at < bucket.length; at += bulkSlice) {
        const slice: StagedWrite[] = [];
        for (let i = at; i < Math.min(bucket.length, at + bulkSlice); i++) {
          const k = bucket.at(i);
          slice.push(slots.at(k).entry ?? { key: keys.at(k), deleted: true });
        }
        base[applyStagedWrites](slice);
        await options.pace?.();
      }
    }
    return keys.length;
  }
  // A base that answers over the network (DynamoDB): the writes of one rank go `asyncWindow` at a
  // time, a rank only once the one before it landed, so the commit order above still holds.
  const done: number[] = [];
  const write = async (k: number) => {
    // The value is the view's, checked and owned: an in-process base keeps it as it is.
    const { entry } = slots.at(k);
    if (entry) await base.put(keys.at(k), entry.value);
    else await base.delete(keys.at(k));
    done.push(k);
  };
  for (const bucket of ranks) {
    let failure: { err: unknown } | undefined;
    for (let at = 0; at < bucket.length && !failure; at += asyncWindow) {
      const window: Promise<void>[] = [];
      for (let i = at; i < Math.min(bucket.length, at + asyncWindow); i++) window.push(write(bucket.at(i)));
      const settled = await Promise.allSettled(window);
      const rejected = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
      if (rejected) failure = { err: rejected.reason };
      await options.pace?.();
    }
    if (failure) throw await rollBack(base, done, keys, slots, failure.err);
  }
  return keys.length;
}

/**
 * Undoes the writes a failed commit made (`done`: indexes of keys/slots), newest first, restoring
 * what the base held (values, not version numbers); returns the error to throw, saying whether the
 * rollback itself failed.
 */
async function rollBack(
  base: Store,
  done: readonly number[],
  keys: ChunkList<string>,
  slots: ChunkList<StagedSlot>,
  cause: unknown,
) {
  let failed = 0;
  for (const k of [...done].reverse()) {
    const before = slots.at(k).before?.entry;
    try {
      if (before) await base.put(keys.at(k), before.value);
      else await base.delete(keys.at(k));
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
