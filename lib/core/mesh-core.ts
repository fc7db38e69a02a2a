/**
 * The mesh core: the one owner of a mesh over a Store, whatever host it lives in (the Node
 * process, the MeshStore Durable Object, a Lambda container). It applies ingest (lib/core/ingest.ts),
 * tracks start-up sync (lib/push/sync-tracker.ts), runs the debounce turn and its flushes,
 * announces each push on its change feed with exactly what it changed, answers status, and tells
 * its observers. A host only adds a driver that calls `turn()` when asked
 * (`requestTurn`: a timer, an alarm), its observers (the push log, with or without stream counts;
 * metrics), and the read side (lib/xds/server.ts) with the transports that map requests to it.
 */

import type { RegistryOptions } from "../ingest/context.ts";
import { logSafe } from "../log-safe.ts";
import type { Pace } from "../pace.ts";
import type { DebounceOptions } from "../push/debounce.ts";
import type { DebounceTurn } from "../push/run.ts";
import { createSyncTracker, type SyncTracker } from "../push/sync-tracker.ts";
import type { Push, PushVersion } from "../resources/changes.ts";
import { type PublishedStatus, publishedStatus } from "../resources/published-status.ts";
import type { PushContext } from "../resources/push-context.ts";
import type { SyncState } from "../resources/sync-gate.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { Timers } from "../timers.ts";
import { type ChangeFeed, createChangeFeed } from "./change-feed.ts";
import { createMeshHooks, type Flush, type MeshObserver, type XdsReporter } from "./hooks.ts";
import { createIngestCore, type IngestCore } from "./ingest.ts";
import { createIngestLease, IngestBusyError } from "./ingest-lease.ts";
import { isQuietFlush } from "./push-log.ts";
import { announceUpTo, createStoreFollower } from "./store-follower.ts";
import { debounceTurn } from "./turn.ts";

/** The mesh's own settings (lib/config.ts reads them from the environment). */
export interface MeshSettings {
  /** PILOT_DEBOUNCE_AFTER, PILOT_DEBOUNCE_MAX, PILOT_ENABLE_EDS_DEBOUNCE. */
  debounce: DebounceOptions;
  /** How Kubernetes objects are read (domain suffix, trust domain, endpoints, discovery selectors). */
  registry: RegistryOptions;
  /** PILOT_SYNC_TIMEOUT (ms): the longest proxies keep what they hold while the registry is not synced. */
  syncTimeoutMs: number;
}

/** What a host gives the core. */
export interface MeshCoreOptions {
  store: Store;
  config: MeshSettings;
  /** The clock and the timer of the sync timeout (injected by tests). */
  timers: Timers;
  log: (line: string) => void;
  /**
   * Asks the host's driver to run `turn()` soon (Node: poke its timer; the Durable Object: arm
   * its alarm): after a batch queued a push, and when the registry became synced.
   */
  requestTurn: () => void | Promise<void>;
  /** A new instance id for a new state lifetime; default crypto.randomUUID(). */
  newId?: () => string;
  /**
   * The store is shared with other cores (several Node instances over one DynamoDB table, Lambda
   * invocations): follow it. Ingest batches take the store's ingest lease
   * (lib/core/ingest-lease.ts), the sync gate reads its record from the store, and from start() to
   * stop() a store follower (store-follower.ts) checks it every `intervalMs`, announcing the pushes
   * other cores made and asking for turns for the pushes they queued. Absent: this core is its
   * store's one writer.
   */
  follow?: { intervalMs: number };
}

/** What the host's driver passes to one turn. */
export interface TurnOptions {
  /**
   * A fresh pace for this turn's flushes (lib/pace.ts createPace): a flush then yields to the event
   * loop between services once a slice is used up (Node: a whole-mesh publish over the memory store
   * would hold the loop for all of it). Absent: a flush does not yield (the Durable Object, where
   * each yield would also commit the storage written so far; Lambda, whose I/O yields anyway).
   */
  pace?: Pace;
}

/** The store's published state and start-up sync state, as StatusService and /ready show them. */
export interface MeshStatus {
  published: PublishedStatus;
  sync: SyncState;
}

/** One mesh over one store. Call start() before serving anything. */
export interface MeshCore {
  readonly store: Store;
  /**
   * Start-up sync: the gate every read path obeys (answers from memory when the core is the one
   * writer; over a shared store, from the record the store holds).
   */
  readonly sync: SyncTracker;
  /** Applies ingest calls, one at a time. */
  readonly ingest: IngestCore;
  /** Every push and every opening of the sync gate, with exactly what changed when known. */
  readonly feed: ChangeFeed;
  /**
   * Loads (or begins) the sync state. A loaded state that is synced but not yet published needs a
   * turn to open the gate: the host decides when to run it (Node at once; the Durable Object at
   * its next alarm).
   */
  start(): Promise<SyncState>;
  /**
   * Runs one debounce turn: flushes what is due, announces each push on the feed, tells the
   * observers, and notes the turn for start-up sync (the first complete turn after sync opens the
   * gate). Throws when the turn failed: the driver retries after turnRetryMs.
   */
  turn(options?: TurnOptions): Promise<DebounceTurn>;
  /** What is published and how far start-up sync got. */
  status(): Promise<MeshStatus>;
  /** Adds an observer (metrics, debug surfaces); returns the function that removes it. */
  observe(observer: MeshObserver): () => void;
  /** Where this host's xDS transports (ADS streams, Poll/Watch) report streams, responses, ACKs and NACKs. */
  readonly xds: XdsReporter;
  /** Disarms the sync timeout and stops the store follower. The host stops its driver first. */
  stop(): void;
}

/** Builds the core over `options.store`; nothing runs until start(). */
export function createMeshCore(options: MeshCoreOptions): MeshCore {
  const { store, config, timers, log, requestTurn } = options;
  const now = () => timers.now();
  const hooks = createMeshHooks(log);
  const feed = createChangeFeed((err) => log(`xds: push listener failed: ${logSafe(err)}`));
  const { follow } = options;
  const sync = createSyncTracker({
    store,
    options: { timeoutMs: config.syncTimeoutMs, useEndpointSlice: config.registry.useEndpointSlice },
    timers,
    log,
    // Ingest runs in the core, so alone over its store it is the record's one writer: the gate
    // answers from memory. Over a shared store another core may change the record at any time.
    cached: !follow,
    ...(follow && { shared: true }),
    requestTurn: () => void requestTurn(),
    // The gate opened: every stream and poll re-reads everything, and held removals go out.
    onOpen: () => feed.emit({ version: 0 }),
    ...(options.newId && { newId: options.newId }),
  });
  // A commit marker a dead ingest lease holder left (lib/ingest/atomic.ts): a new state lifetime.
  const recover = async () => void (await sync.recoverCutShort());
  const recoverUnderLease = () =>
    createIngestLease({ store, timers, maxWaitMs: 0, onTakeover: recover })
      .run(recover)
      .catch((err) => {
        if (!(err instanceof IngestBusyError)) throw err;
      });
  const ingest = createIngestCore({
    store,
    now,
    registry: config.registry,
    sync,
    requestTurn,
    onIngest: hooks.ingest,
    log,
    ...(follow && { lease: { timers, onTakeover: recover } }),
  });
  const follower = follow
    ? createStoreFollower({
        core: { store, feed, sync },
        intervalMs: follow.intervalMs,
        timers,
        log,
        requestTurn: () => void requestTurn(),
      })
    : undefined;

  // The push context the last flush here left: the next flush derives its own from it.
  let lastContext: PushContext | undefined;

  return {
    store,
    sync,
    ingest,
    feed,
    async start() {
      // Streams opened from now on read the store as published: the feed announces what follows.
      feed.skipTo((await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0);
      // Over a shared store, a marker is a dead holder's only when this core can take the ingest
      // lease (a committing holder keeps it): look under the lease, and leave it to the holder if held.
      if (follow) await recoverUnderLease();
      const state = await sync.start();
      follower?.start();
      return state;
    },
    async turn(turnOptions) {
      const startedAt = now();
      // Read after startedAt: a turn that counts as begun after sync (notePublished) sees it synced.
      const turn = await debounceTurn({
        store,
        config,
        now,
        log,
        sync: await sync.state(),
        ...(turnOptions?.pace && { pace: turnOptions.pace }),
        ...(lastContext && { lastContext }),
      });
      for (const flush of turn.flushes) {
        if (flush.context) lastContext = flush.context;
        const at = now();
        const streams = feed.streams;
        if (isQuietFlush(flush)) continue;
        // Observers hear of the push before streams answer it (convergence is measured from it).
        hooks.push({ flush, latencyMs: flush.request ? at - flush.request.start : 0, streams });
        // Over a shared store, pushes another core made before this one are announced first.
        if (follower) await announceUpTo(store, feed, flush.version - 1);
        feed.emit(pushOf(flush));
      }
      hooks.turn({ turn, startedAt, endedAt: now() });
      // Complete: nothing queued before the turn began is left (see DebounceTurn.queuedSince), and
      // no service is held for pods (its names would be missing when the gate opens).
      const complete = (turn.queuedSince === null || turn.queuedSince > startedAt) && !turn.podsHeld;
      await sync.turned(startedAt, complete);
      return turn;
    },
    async status() {
      return { published: await publishedStatus(store), sync: await sync.state() };
    },
    observe: hooks.observe,
    xds: hooks.xds,
    stop() {
      follower?.stop();
      sync.stop();
    },
  };
}

/**
 * The push a flush announces: streams re-diff only what changed; a recovered flush cannot name it,
 * so they re-read all.
 */
function pushOf(flush: Flush): Push {
  const { version, refresh, context } = flush;
  return {
    version,
    ...(!flush.recovered && { changes: flush.changes }),
    ...(refresh && { refresh }),
    ...(context && { context }),
  };
}
