/**
 * The relay: one watcher per kind (the core kinds, v1 Endpoints when asked, the Istio kinds that
 * discovery finds), one sender to ingest, a periodic full resync, and the overflow pause.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { type BackoffOptions, createBackoff, defaultBackoff } from "../../../lib/relay/backoff.ts";
import type { RelayConfig } from "../../../lib/relay/config.ts";
import { createDeliverySender, type DeliveryStats, type Timers } from "../../../lib/relay/delivery.ts";
import type { KindHealth } from "../../../lib/relay/health.ts";
import { coreKinds, endpointsKind, type KindSpec } from "../../../lib/relay/kinds.ts";
import { discoverIstioKinds } from "./discovery.ts";
import { createIngestPoster } from "./ingest-client.ts";
import { createKindWatcher, type KindWatcher } from "./kind-watcher.ts";

/** What the relay needs; tests shorten the backoff and the healthy-watch time. */
export interface RelayOptions {
  kc: KubeConfig;
  config: RelayConfig;
  log: (line: string) => void;
  backoff?: BackoffOptions;
  healthyWatchMs?: number;
  random?: () => number;
  /** How often an idle relay asks the control plane's instance id, to notice a restart (ms; default 5000). */
  heartbeatMs?: number;
}

/** A running relay. */
export interface Relay {
  /** Starts every watcher and the periodic resync; returns at once (lists run in the background). */
  start(): void;
  /** Stops watching, then flushes the queue for at most `timeoutMs`; says whether it emptied. */
  stop(timeoutMs: number): Promise<{ flushed: boolean; stats: DeliveryStats }>;
  /** The kinds being watched now. */
  kinds(): string[];
  /** Each watched kind and whether its first list came back (the health endpoint's readiness). */
  health(): KindHealth[];
  stats(): DeliveryStats;
}

/** Node's timers for the sender. */
export const nodeTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Builds the relay (not started). */
export function createRelay(o: RelayOptions): Relay {
  const { config, log, kc } = o;
  const backoff = o.backoff ?? defaultBackoff;
  const random = o.random ?? Math.random;
  const watchers = new Map<string, KindWatcher>();
  const stopped = new AbortController();
  let paused = false;
  let periodic: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let discoveryRetry: NodeJS.Timeout | undefined;
  const discoveryBackoff = createBackoff(backoff, random);

  const sender = createDeliverySender({
    batchSize: config.batchSize,
    batchDelayMs: config.batchDelayMs,
    maxQueuedEvents: config.maxQueuedEvents,
    backoff,
    post: createIngestPoster({ url: config.url, token: config.token, clusterId: config.clusterId }),
    timers: nodeTimers,
    random,
    log,
    onOverflow: () => {
      paused = true;
      for (const w of watchers.values()) w.pause();
    },
    onDrained: () => {
      paused = false;
      if (!stopped.signal.aborted) for (const w of watchers.values()) w.resume();
    },
    // While paused, the relists come with onDrained anyway.
    onRestart: () => {
      if (paused || stopped.signal.aborted) return;
      for (const w of watchers.values()) w.resync();
    },
  });

  const deps = {
    kc,
    sender,
    log,
    listPageSize: config.listPageSize,
    backoff,
    random,
    healthyWatchMs: o.healthyWatchMs,
    logEvents: config.logEvents,
  };

  function add(kind: KindSpec): void {
    if (watchers.has(kind.kind) || stopped.signal.aborted) return;
    const w = createKindWatcher(kind, deps);
    watchers.set(kind.kind, w);
    // While paused a new kind waits too: resume lists it with the others.
    if (paused) w.pause();
    else w.start();
  }

  function remove(kind: KindSpec): void {
    const w = watchers.get(kind.kind);
    if (!w) return;
    w.stop();
    watchers.delete(kind.kind);
    log(`relay: ${kind.kind}: no longer served (its CRD is gone): resyncing it as empty`);
    const apiVersion = `${kind.group}/${kind.version}`;
    sender.resync(kind.kind, { apiVersion, kind: kind.listKind, metadata: {}, items: [] });
  }

  async function discover(): Promise<void> {
    if (!config.watchIstio || stopped.signal.aborted) return;
    clearTimeout(discoveryRetry);
    discoveryRetry = undefined;
    let served: KindSpec[];
    try {
      served = await discoverIstioKinds(kc, stopped.signal);
    } catch (err) {
      if (stopped.signal.aborted) return;
      const ms = discoveryBackoff.next();
      log(
        `relay: API discovery of networking.istio.io failed: ${err instanceof Error ? err.message : err}; retrying in ${ms}ms`,
      );
      discoveryRetry = setTimeout(() => void discover(), ms);
      return;
    }
    discoveryBackoff.reset();
    const names = new Set(served.map((k) => k.kind));
    for (const w of [...watchers.values()])
      if (w.kind.optional === "istio" && !names.has(w.kind.kind)) remove(w.kind);
    const added = served.filter((k) => !watchers.has(k.kind));
    for (const k of added) add(k);
    if (added.length > 0)
      log(`relay: Istio kinds served, now watched: ${added.map((k) => k.kind).join(", ")}`);
  }

  return {
    start() {
      const kinds = [...coreKinds, ...(config.watchEndpoints ? [endpointsKind] : [])];
      log(
        `relay: cluster ${config.clusterId} -> ${config.url}; watching ${kinds.map((k) => k.kind).join(", ")}` +
          `${config.watchIstio ? " and the Istio networking kinds discovery finds" : ""}; ` +
          `resync ${config.resyncPeriodMs > 0 ? `every ${config.resyncPeriodMs}ms` : "off"}, ` +
          `batches of ${config.batchSize} or ${config.batchDelayMs}ms, queue limit ${config.maxQueuedEvents}`,
      );
      if (config.token === undefined)
        log("relay: EDGEPILOT_TOKEN is not set: posting without a bearer token");
      for (const k of kinds) add(k);
      void discover();
      heartbeat = setInterval(() => sender.heartbeat(), o.heartbeatMs ?? 5000);
      if (config.resyncPeriodMs > 0) {
        periodic = setInterval(() => {
          if (paused) return;
          log(`relay: periodic resync: relisting ${watchers.size} kinds`);
          for (const w of watchers.values()) w.resync();
          void discover();
        }, config.resyncPeriodMs);
      }
    },
    async stop(timeoutMs) {
      stopped.abort();
      clearInterval(periodic);
      clearInterval(heartbeat);
      clearTimeout(discoveryRetry);
      for (const w of watchers.values()) w.stop();
      const flushed = await sender.flush(timeoutMs);
      sender.stop();
      return { flushed, stats: sender.stats() };
    },
    kinds: () => [...watchers.keys()],
    health: () =>
      [...watchers.values()].map((w) => ({ kind: w.kind.kind, listed: w.state().rv !== undefined })),
    stats: () => sender.stats(),
  };
}
