/**
 * All or nothing: a batch (events, a resync, an admission) runs against a staged view of the
 * store and is committed once, after it succeeded; a validation failure or an exception thrown
 * anywhere while applying drops the view, so nothing of the batch (state, `obj/` version
 * records, the queued push) reaches the store. See lib/store/staged.ts for the view's semantics.
 */
import { keys } from "../store/index.ts";
import { CommitError, createStagedStore } from "../store/staged.ts";
import type { ApplyDeps } from "./apply.ts";

/**
 * Commit order: state first, then version records, then the queued push, so a debounce turn that
 * runs while a large commit yields never takes a push whose state has not landed yet.
 */
function commitRank(key: string): number {
  if (key.startsWith(keys.pendingPrefix())) return 2;
  return key.startsWith(keys.objects()) ? 1 : 0;
}

/** What keys.commitMarker() holds while a batch is committed. */
export interface CommitMarker {
  at: number;
  writes: number;
}

/** Options of applyAtomically. */
export interface AtomicOptions {
  /**
   * Awaited after the batch ran and before anything is committed; what it throws drops the batch
   * (nothing applied). Over a shared store the ingest lease renews itself here (lib/core/ingest-lease.ts).
   */
  beforeCommit?: () => Promise<void>;
}

/**
 * Runs `batch` on a staged view of `deps.store` and commits what it wrote only if it returns.
 * The commit is many writes, so it is bracketed by keys.commitMarker(): a process that dies
 * between the two (kill -9 on a durable store) leaves the marker, and the next start treats the
 * state as cut short (a new state lifetime: unsynced, and a new instance id that makes the relay
 * relist at once). A commit that failed and was rolled back removes its marker; one whose
 * rollback failed leaves it, for the same reason.
 */
export async function applyAtomically<T>(
  deps: ApplyDeps,
  batch: (deps: ApplyDeps) => Promise<T>,
  options: AtomicOptions = {},
): Promise<T> {
  const staged = createStagedStore(deps.store);
  const result = await batch({ ...deps, store: staged });
  if (staged.staged === 0) return result;
  await options.beforeCommit?.();
  const marker: CommitMarker = { at: deps.now(), writes: staged.staged };
  await deps.store.put(keys.commitMarker(), marker);
  try {
    await staged.commit({ rank: commitRank, ...(deps.pace && { pace: deps.pace }) });
  } catch (err) {
    if (!(err instanceof CommitError) || err.rolledBack) await deps.store.delete(keys.commitMarker());
    throw err;
  }
  await deps.store.delete(keys.commitMarker());
  return result;
}
