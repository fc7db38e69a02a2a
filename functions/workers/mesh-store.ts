/**
 * The Durable Object that owns the mesh state. One instance (by name) holds every key in its
 * SQLite storage. Ingest runs here: the Worker forwards each batch as one `fetch()` (ingest-host.ts)
 * applied over the local store. The Worker's xDS read paths reach the store through
 * `createDurableObjectStore` over `meshStub(env)` (app.ts). The mesh itself is the same core as on
 * Node (lib/core/mesh-core.ts) over the object's SQL store; this object only adds what a Durable
 * Object hosts it with: the alarm that drives its debounce turns (`kick()` arms it, `alarm()` runs
 * a turn), the store RPC, and the poll host: DeltaPollService's Poll and Watch (forwarded by the
 * Worker to `fetch()`), attached to the core's change feed, so one alarm flush wakes every open
 * Watch and waiting poll in memory (poll-host.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import type { Config } from "../../lib/config.ts";
import { createMeshCore, type MeshCore } from "../../lib/core/mesh-core.ts";
import { createPushLogObserver, turnFailedLine, turnRetryMs } from "../../lib/core/push-log.ts";
import { type LineLog, logError, logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import {
  attachMetrics,
  type CoreMetrics,
  createRegistry,
  measureStore,
  type Registry,
} from "../../lib/metrics/index.ts";
import { type StoreRpc, serveStoreRpc } from "../../lib/store/durable-object.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import type { DeleteOptions, ListOptions, PutOptions, Store } from "../../lib/store/store.ts";
import { createXdsServer, type PollingXdsServer } from "../../lib/xds/server.ts";
import { isDebugPath } from "../debug.ts";
import { ConfigError, workerConfig } from "./config.ts";
import { createDebugHost } from "./debug-host.ts";
import type { Env } from "./index.ts";
import { createIngestHost, isIngestPath } from "./ingest-host.ts";
import { workerLog } from "./log.ts";
import { createPollHost, meshStoreXdsSettings, type PollHost } from "./poll-host.ts";

/** Serves the Store port over RPC; each call runs in one event, so compare-and-set is atomic. */
export class MeshStore extends DurableObject<Env> implements StoreRpc {
  readonly #store: Store;
  readonly #rpc: StoreRpc;
  #polls: PollHost | undefined;
  #server: PollingXdsServer | undefined;
  #ingest: Hono | undefined;
  #debug: Hono | undefined;
  #core: MeshCore | undefined;
  /** The core's log (LOG_FORMAT / LOG_LEVEL), once a configuration parsed. */
  #log: LineLog | undefined;
  #metrics: CoreMetrics | undefined;
  /** The registry of this object's metrics: its store's calls from the start, the core's once built. */
  readonly #registry: Registry = createRegistry();
  /** The core's start (settled, failed or not): served calls and turns wait for it. */
  #started: Promise<void> = Promise.resolve();
  #calls = 0;
  /** edgepilot_durable_object_requests{entry}: what Cloudflare bills this object for, by entry point. */
  readonly #requests = this.#registry.counter({
    name: "edgepilot_durable_object_requests",
    help: "Calls this Durable Object served, by entry point: fetch (ingest, Poll/Watch, /ready, debug), store (one store RPC), kick, alarm, metrics.",
    labelNames: ["entry"],
  });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = measureStore(createSqlStore(ctx.storage.sql), this.#registry);
    this.#rpc = serveStoreRpc(this.#store);
  }

  /** Counts one call through `entry` (the calls getter and edgepilot_durable_object_requests). */
  #entered(entry: "fetch" | "store" | "kick" | "alarm" | "metrics"): void {
    this.#calls++;
    this.#requests.labels(entry).inc();
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
    this.#entered("store");
    return this.#rpc.storeGet(key);
  }

  storeGetMany(keys: string[]) {
    this.#entered("store");
    return this.#rpc.storeGetMany(keys);
  }

  storePut(key: string, value: string, options?: PutOptions) {
    this.#entered("store");
    return this.#rpc.storePut(key, value, options);
  }

  storeDelete(key: string, options?: DeleteOptions) {
    this.#entered("store");
    return this.#rpc.storeDelete(key, options);
  }

  storeList(prefix: string, options?: ListOptions) {
    this.#entered("store");
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
    this.#entered("fetch");
    let host: { fetch(request: Request): Response | Promise<Response> };
    try {
      const config = workerConfig(this.env);
      const core = this.#mesh(config);
      await this.#started;
      const path = new URL(request.url).pathname;
      if (isDebugPath(path)) {
        this.#debug ??= createDebugHost(this.#xds(core, config));
        host = this.#debug;
      } else if (isIngestPath(path)) {
        this.#ingest ??= createIngestHost({
          core: core.ingest,
          config,
          log: workerLog(config.log),
          store: this.#store,
        });
        host = this.#ingest;
      } else {
        this.#polls ??= createPollHost(this.#xds(core, config).poll, config.limits, workerLog(config.log));
        host = this.#polls;
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return Response.json({ error: err.message, errors: err.errors }, { status: 500 });
    }
    return host.fetch(request);
  }

  /**
   * The mesh core over this object's own store, built on first use (the configuration comes from
   * env). Its sync record is in the object's storage, so a restarted object loads its old state,
   * synced and published; ingest runs here, so the core is the record's one writer and keeps it in
   * memory, like Node's, and its start finds a batch a restart cut off mid-commit (a new state
   * begins). Its sync timer (PILOT_SYNC_TIMEOUT after the state began) re-checks it; a batch that
   * queued a push, or the registry becoming synced, arms the alarm; the first complete turn after
   * sync opens the gate and wakes every poll and Watch.
   */
  #mesh(config: Config): MeshCore {
    if (!this.#core) {
      const log = workerLog(config.log);
      this.#log = log;
      this.#core = createMeshCore({
        store: this.#store,
        config,
        timers: {
          now: () => Date.now(),
          setTimeout: (f, ms) => setTimeout(f, ms),
          clearTimeout: (h) => clearTimeout(h as number),
        },
        log,
        // The batch is applied and queued already; the cron kick is the safety net for a lost one.
        requestTurn: () =>
          this.#arm().catch((err: unknown) =>
            logWarn(log, `debounce: arming the alarm failed, the cron trigger will push: ${logSafe(err)}`),
          ),
      });
      // One line per push, without stream counts (the Worker's lines never had them).
      this.#core.observe(createPushLogObserver(log, { streams: false }));
      // The core's metrics live here with it; the Worker's GET /metrics asks for them (metrics()).
      this.#metrics = attachMetrics(this.#core, this.#registry);
      this.#started = this.#core.start().then(
        () => undefined,
        (err: unknown) => logError(log, `sync: loading the sync record failed: ${err}`),
      );
      this.ctx.waitUntil(this.#started);
    }
    return this.#core;
  }

  /**
   * The object's read side over its core, built at the first read (Poll/Watch or debug): its views
   * and poll hub attach to the core's feed, so one alarm flush wakes every open Watch and waiting poll.
   */
  #xds(core: MeshCore, config: Config): PollingXdsServer {
    // Poll/Watch NACKs are logged once each, in LOG_FORMAT at warn, as the Node host logs them.
    this.#server ??= createXdsServer(core, { ...meshStoreXdsSettings(config), log: workerLog(config.log) });
    return this.#server;
  }

  /**
   * The core's metrics as Prometheus text (format 0.0.4): one call for the Worker's GET /metrics.
   * A bad configuration throws its ConfigError (the Worker answers 500 naming it).
   */
  async metrics(): Promise<string> {
    this.#entered("metrics");
    this.#mesh(workerConfig(this.env));
    await this.#started;
    return (this.#metrics as CoreMetrics).expose();
  }

  /** Open Watch streams and waiting polls in this object. */
  get openPolls(): number {
    return this.#server?.poll.open ?? 0;
  }

  /** Makes sure a debounce turn runs now: arms the alarm unless one is already due no later than now. */
  async kick(): Promise<void> {
    this.#entered("kick");
    await this.#arm();
  }

  /** kick()'s work, for callers inside this object (the core: ingest, sync): no entry call. */
  async #arm(): Promise<void> {
    const now = Date.now();
    const at = await this.ctx.storage.getAlarm();
    if (at === null || at > now) await this.ctx.storage.setAlarm(now);
  }

  /**
   * One debounce turn of the core over this object's own SQL store (no RPC): pushes what is due,
   * logs it and wakes the polls and Watches it concerns (the core's feed), then re-arms
   * the alarm for the next turn (none when the queue is empty), keeping an earlier alarm a `kick()`
   * set meanwhile. A failed turn retries after 1s; a bad configuration is logged and not retried
   * (the cron kick logs it again).
   */
  override async alarm(): Promise<void> {
    this.#entered("alarm");
    const now = () => Date.now();
    let nextAt: number | null;
    try {
      const core = this.#mesh(workerConfig(this.env));
      await this.#started;
      nextAt = (await core.turn()).nextAt;
    } catch (err) {
      if (err instanceof ConfigError) {
        console.error(`debounce: not running: ${err.message}`);
        return;
      }
      if (this.#log) logError(this.#log, turnFailedLine(err));
      else console.error(turnFailedLine(err));
      nextAt = now() + turnRetryMs;
    }
    if (nextAt === null) return;
    // While alarm() runs, getAlarm() is null unless something called setAlarm() since it started.
    const pending = await this.ctx.storage.getAlarm();
    if (pending === null || pending > nextAt) await this.ctx.storage.setAlarm(nextAt);
  }
}
