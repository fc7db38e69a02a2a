/**
 * The driver of sync-state.ts over a Store: loads or creates the record (keys.syncRecord()), notes
 * accepted ingest calls with compare-and-set, logs every change of state, and tells the runtime
 * when the registry becomes synced (by its clusters or by PILOT_SYNC_TIMEOUT) so held answers go
 * out at once. Node and the Worker's Durable Object keep the record in memory (`cached`: each is
 * its store's only writer, ingest runs in it), so their gate costs no store read; the Worker
 * isolate's read paths read the record every time.
 */

import { logWarn } from "../log/line-log.ts";
import type { SyncGate, SyncState } from "../resources/sync-gate.ts";
import { keys } from "../store/keys.ts";
import { type Store, update } from "../store/store.ts";
import type { Timers } from "../timers.ts";
import {
  decideSync,
  newSyncRecord,
  noteIngest,
  notePublished,
  type SyncOptions,
  type SyncRecord,
  syncTransitions,
} from "./sync-state.ts";

export interface SyncTrackerOptions {
  store: Store;
  options: SyncOptions;
  timers: Timers;
  log: (line: string) => void;
  /** Keep the record in memory: only when this process is the store's one writer (Node). */
  cached: boolean;
  /**
   * The store is shared with other writers (not cached): the record is read from the store by
   * state() (the store follower calls it every poll interval), and the gate answers from the last
   * record read once that one was published, so a read path costs no store read once the gate is
   * open; a new state lifetime another writer began closes it at the next read.
   */
  shared?: boolean;
  /**
   * Called when the registry becomes synced, when a cluster's Pod resync arrives and when the
   * timeout passes: run a debounce turn, so its state (and what was held for pods) gets published.
   */
  requestTurn?: () => void;
  /** Called when the gate opens (synced and published): wake every open stream and waiting poll. */
  onOpen?: () => void;
  /** A new instance id; default crypto.randomUUID(). */
  newId?: () => string;
}

/** The sync state of one store, and the gate the read paths obey. */
export interface SyncTracker extends SyncGate {
  /** Loads the record, creating it when missing (a new state lifetime), logs the state, arms the timeout. */
  start(): Promise<SyncState>;
  /** The state now (Node: from memory; Worker: reads the record). */
  state(): Promise<SyncState>;
  /**
   * Notes an accepted ingest call for `cluster` (a resync of `resyncKind` when given, with the kinds
   * its sender watches there when it said).
   */
  ingested(cluster: string, resyncKind?: string, watching?: readonly string[]): Promise<void>;
  /**
   * Notes a debounce turn that began at `startedAt`; `complete` when it left nothing queued that
   * arrived before it began. The first complete turn begun after sync opens the gate (sync-state.ts notePublished).
   */
  turned(startedAt: number, complete: boolean): Promise<void>;
  /** The instance id of this state's lifetime. */
  instance(): Promise<string>;
  /**
   * Looks for the commit marker a batch cut short left (lib/ingest/atomic.ts) and, when there is
   * one, begins a new state lifetime. start() does it for a sole writer; over a shared store the
   * ingest lease does it when it takes over from a holder that died (lib/core/ingest-lease.ts).
   * True when it found one.
   */
  recoverCutShort(): Promise<boolean>;
  /** Disarms the timeout timer. */
  stop(): void;
}

/** Builds a tracker; call start() before serving. */
export function createSyncTracker(o: SyncTrackerOptions): SyncTracker {
  const { store, options, timers, log } = o;
  const newId = o.newId ?? (() => crypto.randomUUID());
  let cache: SyncRecord | undefined;
  /** The record last read (shared stores: what the gate answers from once it was published). */
  let lastRead: SyncRecord | undefined;
  let shown: SyncState | undefined;
  let timer: unknown;

  async function load(): Promise<SyncRecord> {
    if (o.cached && cache) return cache;
    let record = (await store.get<SyncRecord>(keys.syncRecord()))?.value;
    if (!record) {
      // A new state begins: create the record unless another writer just did.
      let found: SyncRecord | undefined;
      const made = await update<SyncRecord>(store, keys.syncRecord(), (current) => {
        found = current?.value;
        return current ? undefined : newSyncRecord(newId(), timers.now());
      });
      record = made ?? found;
    }
    if (!record) throw new Error(`${keys.syncRecord()} vanished while it was read`);
    if (o.cached) cache = record;
    lastRead = record;
    return record;
  }

  /**
   * A commit marker left by a process that died mid-commit (lib/ingest/atomic.ts) means the store
   * may hold part of a batch: begin a new state lifetime (unsynced, new instance id, so the relay
   * relists every kind at once and no proxy is told to remove anything until it has).
   */
  async function recoverCutShort(): Promise<boolean> {
    const marker = await store.get<{ at: number; writes: number }>(keys.commitMarker());
    if (!marker) return false;
    const record = newSyncRecord(newId(), timers.now());
    await store.put(keys.syncRecord(), record);
    await store.delete(keys.commitMarker());
    if (o.cached) cache = record;
    lastRead = record;
    log(
      `sync: WARNING: an ingest batch of ${marker.value.writes} write(s) was cut off mid-commit before this start; ` +
        `the stored state may hold part of it, so a new state begins (instance ${record.instance}): ` +
        "the relay relists every kind, and proxies keep what they hold until the resyncs arrive",
    );
    // A new lifetime, shown from scratch: its state is logged and its sync timeout armed.
    shown = undefined;
    show(decideSync(record, timers.now(), options));
    return true;
  }

  /** Logs what changed since the state last shown; wakes the runtime when it became synced. */
  function show(state: SyncState): void {
    const before = shown;
    if (before?.synced && !state.synced) return; // an older read racing a newer one
    shown = state;
    for (const line of syncTransitions(before, state)) log(line);
    if (before && (wakes(before, state) || podsArrived(before, state))) o.requestTurn?.();
    if (before && !before.published && state.published) o.onOpen?.();
    if (!state.synced || (!state.timedOut && state.clusters.some((c) => !c.pods))) arm(state);
  }

  function arm(state: SyncState): void {
    if (timer !== undefined) return;
    timer = timers.setTimeout(
      () => {
        timer = undefined;
        void current().catch((err) => logWarn(log, `sync: reading the sync record failed: ${err}`));
      },
      Math.max(0, state.timeoutAt - timers.now()),
    );
  }

  /** Became synced, or the timeout passed with a Pod resync missing (what was held for pods is released). */
  function wakes(before: SyncState, state: SyncState): boolean {
    if (!before.synced && state.synced) return true;
    return !before.timedOut && state.timedOut && state.clusters.some((c) => !c.pods);
  }

  /** A cluster's Pod resync arrived. */
  function podsArrived(before: SyncState, state: SyncState): boolean {
    const had = new Set(before.clusters.filter((c) => c.pods).map((c) => c.cluster));
    return state.clusters.some((c) => c.pods && !had.has(c.cluster));
  }

  async function current(): Promise<SyncState> {
    const state = decideSync(await load(), timers.now(), options);
    // A Worker isolate's first look: what it finds is no change (the object logs those).
    if (!o.cached && shown === undefined) {
      shown = state;
      return state;
    }
    if (
      shown?.synced !== state.synced ||
      shown.published !== state.published ||
      shown.timedOut !== state.timedOut
    )
      show(state);
    return state;
  }

  return {
    async start() {
      // Only a sole writer can tell a dead process's marker from a commit running elsewhere.
      if (o.cached) await recoverCutShort();
      const state = decideSync(await load(), timers.now(), options);
      show(state);
      return state;
    },
    state: current,
    synced() {
      if (o.shared && lastRead?.publishedAt !== undefined) return true;
      if (!o.cached || !cache) return current().then((s) => s.published);
      return cache.publishedAt !== undefined;
    },
    async turned(startedAt, complete) {
      if (!complete || (o.cached && cache?.publishedAt !== undefined)) return;
      let before: SyncRecord | undefined;
      const next = await update<SyncRecord>(store, keys.syncRecord(), (entry) => {
        before = entry?.value;
        return before && notePublished(before, startedAt, complete, timers.now(), options);
      });
      if (!next) return;
      if (o.cached) cache = next;
      lastRead = next;
      if (!o.cached && before) shown = decideSync(before, startedAt, options);
      show(decideSync(next, timers.now(), options));
    },
    async ingested(cluster, resyncKind, watching) {
      const now = timers.now();
      let before: SyncRecord | undefined;
      const next = await update<SyncRecord>(store, keys.syncRecord(), (entry) => {
        before = entry?.value;
        return noteIngest(before ?? newSyncRecord(newId(), now), now, options, cluster, resyncKind, watching);
      });
      if (!next) return;
      if (o.cached) cache = next;
      lastRead = next;
      // Another process may have written the record since this one last looked (the Worker).
      if (!o.cached && before) shown = decideSync(before, now, options);
      show(decideSync(next, timers.now(), options));
    },
    async instance() {
      return (await load()).instance;
    },
    recoverCutShort,
    stop() {
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}
