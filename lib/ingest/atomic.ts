/**
 * All or nothing: a batch (events, a resync, an admission) runs against a staged view of the
 * store and is committed once, after it succeeded; a validation failure or an exception thrown
 * anywhere while applying drops the view, so nothing of the batch (state, `obj/` version
 * records, the queued push) reaches the store. See lib/store/staged.ts for the view's semantics.
 */
import { keys } from "../store/index.ts";
import { createStagedStore } from "../store/staged.ts";
import type { ApplyDeps } from "./apply.ts";

/**
 * Commit order: state first, then version records, then the queued push, so a debounce turn that
 * runs while a large commit yields never takes a push whose state has not landed yet.
 */
function commitRank(key: string): number {
  if (key.startsWith(keys.pendingPrefix())) return 2;
  return key.startsWith(keys.objects()) ? 1 : 0;
}

/** Runs `batch` on a staged view of `deps.store` and commits what it wrote only if it returns. */
export async function applyAtomically<T>(
  deps: ApplyDeps,
  batch: (deps: ApplyDeps) => Promise<T>,
): Promise<T> {
  const staged = createStagedStore(deps.store);
  const result = await batch({ ...deps, store: staged });
  await staged.commit({ rank: commitRank, ...(deps.pace && { pace: deps.pace }) });
  return result;
}
