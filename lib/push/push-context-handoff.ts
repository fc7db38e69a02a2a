/**
 * How the context the flush built reaches readers in the same process: by the push's changes (the
 * very array the change feed carries to every stream, so a reader holding a push finds its
 * context) and by the store (the next flush over it derives its context from the last one while
 * the store's push version is still that one's). A reader in another process finds neither and
 * loads the context with loadPushContext.
 */

import type { ResourceChange } from "../resources/changes.ts";
import type { PushContext, PushContextOptions } from "../resources/push-context.ts";
import type { Store } from "../store/index.ts";

const byPush = new WeakMap<readonly ResourceChange[], PushContext>();
const byStore = new WeakMap<Store, PushContext>();

/** Records `context` as the one the push of `changes` over `store` left. */
export function handOffPushContext(
  store: Store,
  changes: readonly ResourceChange[],
  context: PushContext,
): void {
  byPush.set(changes, context);
  byStore.set(store, context);
}

/**
 * The context of the push that announced `changes`, when it was built in this process with the
 * same options (a host generating for another domain suffix or selectors loads its own).
 */
export function pushContextOf(
  changes: readonly ResourceChange[],
  options: PushContextOptions,
): PushContext | undefined {
  const ctx = byPush.get(changes);
  return ctx && sameOptions(ctx.options, options) ? ctx : undefined;
}

/** The last context a flush over `store` built in this process, when it describes push `version` with `options`. */
export function lastPushContext(
  store: Store,
  version: number,
  options: PushContextOptions,
): PushContext | undefined {
  const last = byStore.get(store);
  return last?.version === version && sameOptions(last.options, options) ? last : undefined;
}

function sameOptions(a: PushContextOptions, b: PushContextOptions): boolean {
  return (
    a.domainSuffix === b.domainSuffix &&
    JSON.stringify(a.discoverySelectors ?? []) === JSON.stringify(b.discoverySelectors ?? [])
  );
}
