/**
 * The store follower: how a mesh core learns of pushes another core made over the same shared
 * store (several Node instances behind a load balancer over one DynamoDB table, Lambda
 * invocations). Every intervalMs it reads the published push version (keys.pushVersion()) and,
 * when it moved past what this core's feed announced, announces the pushes since, in order, with
 * the changes their push log entries (keys.pushLog(seq)) name, with the published bodies read once
 * for all of this instance's streams (withBodies; what a change does not carry, a stream reads from
 * the store: lib/xds/change-source.ts). An entry that is gone, truncated (changeCount >
 * changes.length) or written by a flush that took over a crashed one announces `undefined`
 * changes: every stream re-reads everything.
 *
 * No push is announced twice: the feed drops versions at or below the last it announced
 * (change-feed.ts), and every announcer (this follower, the core's own turn through
 * announceUpTo before it announces its own flush) first announces the versions before its own, so
 * the feed's versions stay contiguous whoever got there first.
 */
import { logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import { maxFeedBodyBytes, type PushLogEntry } from "../push/flush.ts";
import { loggedPush } from "../push/push-refresh.ts";
import type { SyncTracker } from "../push/sync-tracker.ts";
import type { Push, PushVersion } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { Timers } from "../timers.ts";
import type { ChangeFeed } from "./change-feed.ts";

/**
 * The most push log entries one catch-up reads; a feed further behind announces the newest version
 * once with `undefined` changes (every stream re-reads everything, which covers every push between).
 */
export const maxCatchUp = 64;

/** The default interval between checks (EDGEPILOT_STORE_POLL_INTERVAL's default), ms. */
export const defaultPollIntervalMs = 1000;

/** What the follower follows: a MeshCore fits (store, feed and its sync tracker). */
export interface FollowedCore {
  readonly store: Store;
  readonly feed: ChangeFeed;
  /**
   * The sync tracker of a shared store: read at each check, so a gate another writer opened (or a
   * state lifetime it began) reaches this instance's streams within intervalMs.
   */
  readonly sync?: Pick<SyncTracker, "state">;
}

/** Options of createStoreFollower. */
export interface StoreFollowerOptions {
  core: FollowedCore;
  /** Time between checks from start() (ms); EDGEPILOT_STORE_POLL_INTERVAL on Node. */
  intervalMs: number;
  timers: Timers;
  log: (line: string) => void;
  /**
   * Called when a check finds pushes queued (push/pending/): the host runs a debounce turn, so a
   * push queued by an instance that died before its turn is still flushed (the flush lease makes
   * one flush run at a time; the others find it busy).
   */
  requestTurn?: () => void;
}

/** A follower; nothing runs until start() or check(). */
export interface StoreFollower {
  /** One check: announces the pushes the store published since the feed's last one. */
  check(): Promise<void>;
  /** Checks every intervalMs (after the one before finished) until stop(). */
  start(): void;
  /** Stops checking; a check running finishes. */
  stop(): void;
}

/** Builds a follower of `options.core`'s store for its feed. */
export function createStoreFollower(options: StoreFollowerOptions): StoreFollower {
  const { core, timers, log } = options;
  if (!(Number.isFinite(options.intervalMs) && options.intervalMs > 0))
    throw new RangeError(`store follower: interval ${options.intervalMs} ms is not a positive number`);
  let running: Promise<void> | undefined;
  let timer: unknown;
  let started = false;

  const once = async () => {
    const stored = await core.store.get<PushVersion>(keys.pushVersion());
    await announceUpTo(core.store, core.feed, stored?.value.version ?? 0);
    await core.sync?.state();
    if (options.requestTurn) {
      const queued = await core.store.list(keys.pendingPrefix(), { limit: 1 });
      if (queued.entries.length > 0) options.requestTurn();
    }
  };
  const check = () => {
    // Concurrent callers share the running check (its announcements are theirs too).
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };
  const schedule = () => {
    if (!started) return;
    timer = timers.setTimeout(() => {
      timer = undefined;
      void check()
        .catch((err) => logWarn(log, `store follower: check failed, retrying: ${logSafe(err)}`))
        .finally(schedule);
    }, options.intervalMs);
  };
  return {
    check,
    start() {
      if (started) return;
      started = true;
      schedule();
    },
    stop() {
      started = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Announces on `feed`, in order, every push after its version up to `target`, from the push log;
 * what another announcer announced meanwhile is skipped (the feed drops it). The core calls it
 * before announcing a flush of its own over a shared store, so a push another core made just
 * before it is never lost behind its own.
 */
export async function announceUpTo(store: Store, feed: ChangeFeed, target: number): Promise<void> {
  const from = feed.version;
  if (target <= from) return;
  if (target - from > maxCatchUp) {
    feed.emit({ version: target });
    return;
  }
  const seqs: number[] = [];
  for (let seq = from + 1; seq <= target; seq++) seqs.push(seq);
  const entries = await store.getMany<PushLogEntry>(seqs.map((seq) => keys.pushLog(seq)));
  const pushes = await withBodies(
    store,
    seqs.map((seq) => loggedPushOf(seq, entries.get(keys.pushLog(seq))?.value)),
  );
  for (const push of pushes) feed.emit(push);
}

/** The most upserts one catch-up reads the bodies of (one getMany); past it, streams read them. */
export const maxPreloadedBodies = 4096;

/**
 * The pushes' changes with the published resources' bodies, read once for every stream of this
 * instance (each would otherwise read them itself: 1,000 ADS streams, 1,000 reads of the same
 * items). A change carries the resource the store holds now (a later push may have changed it
 * again; that push is announced next and changes nothing more for a stream that has it). Changes of
 * a view's overlay, names no longer published, and bodies past maxFeedBodyBytes stay as logged.
 */
async function withBodies(store: Store, pushes: readonly Push[]): Promise<Push[]> {
  const wanted = new Set<string>();
  for (const { changes } of pushes)
    for (const c of changes ?? [])
      if (c.version !== null && c.view === undefined) wanted.add(keys.resource(c.typeUrl, c.name));
  if (wanted.size === 0 || wanted.size > maxPreloadedBodies) return [...pushes];
  const found = await store.getMany<StoredResource>([...wanted]);
  let bytes = 0;
  return pushes.map((push) => {
    if (push.changes === undefined) return push;
    const changes = push.changes.map((c) => {
      if (c.version === null || c.view !== undefined) return c;
      const stored = found.get(keys.resource(c.typeUrl, c.name))?.value;
      if (!stored || bytes + stored.body.byteLength > maxFeedBodyBytes) return c;
      bytes += stored.body.byteLength;
      const { typeUrl, name, version, body, service } = stored;
      return { typeUrl, name, version, body, service };
    });
    return { ...push, changes };
  });
}

/**
 * Push `seq` as its push log entry names it (its refresh flag too: push-refresh.ts), or with
 * `changes` unknown when the entry cannot name them all (gone, truncated, recovered).
 */
export function loggedPushOf(seq: number, entry: PushLogEntry | undefined): Push {
  if (!entry || entry.recovered || entry.changeCount > entry.changes.length)
    return { version: seq, ...(entry?.refresh && { refresh: true as const }) };
  const { changes, refresh } = loggedPush(entry.changes, entry.refresh);
  return { version: seq, changes, ...(refresh && { refresh: true as const }) };
}
