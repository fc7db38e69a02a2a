/**
 * The Durable Object that owns the mesh state. One instance (by name) holds every key in its
 * SQLite storage. Ingest runs here: the Worker forwards each batch as one `fetch()` (ingest-host.ts)
 * applied over the local store. The Worker's xDS read paths reach the store through
 * `createDurableObjectStore` over `meshStub(env)` (app.ts). It also drives the debounce: `kick()`
 * arms the alarm, `alarm()` runs a turn over the local store. And it serves DeltaPollService's Poll
 * and Watch (forwarded by the Worker to `fetch()`), so one alarm flush wakes every open Watch and
 * waiting poll in memory (poll-host.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import type { Config } from "../../lib/config.ts";
import { createSyncTracker, type SyncTracker } from "../../lib/push/sync-tracker.ts";
import { type StoreRpc, serveStoreRpc } from "../../lib/store/durable-object.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import type { DeleteOptions, ListOptions, PutOptions, Store } from "../../lib/store/store.ts";
import { debounceTurn } from "../debounce.ts";
import { ConfigError, workerConfig } from "./config.ts";
import type { Env } from "./index.ts";
import { createIngestHost, isIngestPath } from "./ingest-host.ts";
import { createPollHost, type PollHost } from "./poll-host.ts";
import { pushLogLines } from "./push-log.ts";

/** Retry delay after a failed debounce turn (ms), as on Node. */
const retryMs = 1000;

/** Serves the Store port over RPC; each call runs in one event, so compare-and-set is atomic. */
export class MeshStore extends DurableObject<Env> implements StoreRpc {
  readonly #store: Store;
  readonly #rpc: StoreRpc;
  #polls: PollHost | undefined;
  #ingest: Hono | undefined;
  #sync: SyncTracker | undefined;
  /** The tracker's start (settled, failed or not): served calls and turns wait for it. */
  #started: Promise<void> = Promise.resolve();
  #calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = createSqlStore(ctx.storage.sql);
    this.#rpc = serveStoreRpc(this.#store);
  }

  /** The SQL store itself, for code running inside this object (no RPC, no re-encoding). */
  get store(): Store {
    return this.#store;
  }

  /**
   * Calls this object has served since it started, counting every entry point (fetch, each store
   * RPC, kick, alarm): what "Durable Object calls per ingest batch" is measured by.
   */
  get calls(): number {
    return this.#calls;
  }

  storeGet(key: string) {
    this.#calls++;
    return this.#rpc.storeGet(key);
  }

  storeGetMany(keys: string[]) {
    this.#calls++;
    return this.#rpc.storeGetMany(keys);
  }

  storePut(key: string, value: string, options?: PutOptions) {
    this.#calls++;
    return this.#rpc.storePut(key, value, options);
  }

  storeDelete(key: string, options?: DeleteOptions) {
    this.#calls++;
    return this.#rpc.storeDelete(key, options);
  }

  storeList(prefix: string, options?: ListOptions) {
    this.#calls++;
    return this.#rpc.storeList(prefix, options);
  }

  /**
   * Serves an ingest batch, /ready, or a Poll or Watch the Worker forwarded. A Watch's response
   * streams for as long as the client stays: while it does, this object stays in memory (a request
   * in progress is never hibernated or evicted for idleness); if the object is restarted anyway (a
   * deploy), the stream ends and the client re-opens it with what it holds. A bad configuration
   * answers 500.
   */
  override async fetch(request: Request): Promise<Response> {
    this.#calls++;
    let host: { fetch(request: Request): Response | Promise<Response> };
    try {
      const config = workerConfig(this.env);
      const sync = this.#tracker(config);
      await this.#started;
      if (isIngestPath(new URL(request.url).pathname)) {
        const log = (line: string) => console.log(line);
        this.#ingest ??= createIngestHost({ store: this.#store, config, sync, kick: () => this.#arm(), log });
        host = this.#ingest;
      } else {
        this.#polls ??= createPollHost(this.#store, config.limits, sync);
        host = this.#polls;
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return Response.json({ error: err.message, errors: err.errors }, { status: 500 });
    }
    return host.fetch(request);
  }

  /**
   * Start-up sync over this object's own store. The record is in the object's storage, so a
   * restarted object loads its old state, synced and published. Ingest runs here, so this object is
   * the record's one writer (the Worker's read paths only read it): the tracker keeps it in memory,
   * like Node's, and its start finds a batch a restart cut off mid-commit (a new state begins).
   * Its timer (PILOT_SYNC_TIMEOUT after the state began) re-checks it; becoming synced arms the
   * alarm, and the first complete turn after it opens the gate and wakes every poll and Watch.
   */
  #tracker(config: Config): SyncTracker {
    if (!this.#sync) {
      this.#sync = createSyncTracker({
        store: this.#store,
        options: { timeoutMs: config.syncTimeoutMs, useEndpointSlice: config.registry.useEndpointSlice },
        timers: {
          now: () => Date.now(),
          setTimeout: (f, ms) => setTimeout(f, ms),
          clearTimeout: (h) => clearTimeout(h as number),
        },
        log: (line) => console.log(line),
        cached: true,
        onSynced: () => void this.#arm(),
        onOpen: () => this.#polls?.wakeAll(),
      });
      this.#started = this.#sync.start().then(
        () => undefined,
        (err: unknown) => console.error(`sync: loading the sync record failed: ${err}`),
      );
      this.ctx.waitUntil(this.#started);
    }
    return this.#sync;
  }

  /** Open Watch streams and waiting polls in this object. */
  get openPolls(): number {
    return this.#polls?.open ?? 0;
  }

  /** Makes sure a debounce turn runs now: arms the alarm unless one is already due no later than now. */
  async kick(): Promise<void> {
    this.#calls++;
    await this.#arm();
  }

  /** kick()'s work, for callers inside this object (ingest, the sync tracker): no entry call. */
  async #arm(): Promise<void> {
    const now = Date.now();
    const at = await this.ctx.storage.getAlarm();
    if (at === null || at > now) await this.ctx.storage.setAlarm(now);
  }

  /**
   * One debounce turn over this object's own SQL store (no RPC): pushes what is due, then re-arms
   * the alarm for the next turn (none when the queue is empty), keeping an earlier alarm a `kick()`
   * set meanwhile. A failed turn retries after 1s; a bad configuration is logged and not retried
   * (the cron kick logs it again).
   */
  override async alarm(): Promise<void> {
    this.#calls++;
    const now = () => Date.now();
    let nextAt: number | null;
    try {
      const config = workerConfig(this.env);
      const sync = this.#tracker(config);
      await this.#started;
      const started = now();
      const turn = await debounceTurn({ store: this.#store, config, now });
      // The first complete turn after the registry synced opens the gate and wakes every poll.
      await sync.turned(started, turn.flushes.length > 0 || turn.nextAt === null);
      for (const line of pushLogLines(turn, now())) console.log(line);
      this.#polls?.publish(turn);
      nextAt = turn.nextAt;
    } catch (err) {
      if (err instanceof ConfigError) {
        console.error(`debounce: not running: ${err.message}`);
        return;
      }
      console.error(
        `debounce: turn failed, retrying: ${err instanceof Error ? (err.stack ?? err.message) : err}`,
      );
      nextAt = now() + retryMs;
    }
    if (nextAt === null) return;
    // While alarm() runs, getAlarm() is null unless something called setAlarm() since it started.
    const pending = await this.ctx.storage.getAlarm();
    if (pending === null || pending > nextAt) await this.ctx.storage.setAlarm(nextAt);
  }
}
