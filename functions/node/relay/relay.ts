/**
 * The relay: one watcher per kind (the "always" kinds of lib/kinds/descriptors.ts, v1 Endpoints when
 * asked, the Istio and Gateway API kinds that API discovery finds served, each at its newest served
 * version), one sender to ingest, a periodic full resync, re-discovery on an interval, the overflow
 * pause, and the status writer (RELAY_STATUS_INTERVAL) that writes the Gateway API statuses back.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { type BackoffOptions, createBackoff, defaultBackoff } from "../../../lib/relay/backoff.ts";
import type { RelayConfig } from "../../../lib/relay/config.ts";
import { createDeliverySender, type DeliveryStats } from "../../../lib/relay/delivery.ts";
import { type DiscoveryPlan, planDiscovery } from "../../../lib/relay/discovery.ts";
import type { KindHealth } from "../../../lib/relay/health.ts";
import { apiVersionOf, crdKinds, fixedKinds, type KindSpec } from "../../../lib/relay/kinds.ts";
import { classifyPost } from "../../../lib/relay/outcome.ts";
import type { Timers } from "../../../lib/timers.ts";
import { discoverCrdKinds } from "./discovery.ts";
import { createIngestPoster } from "./ingest-client.ts";
import { createKindWatcher, type KindWatcher } from "./kind-watcher.ts";
import { createSecretWatchers } from "./secret-watchers.ts";
import { createStatusWriter, type StatusStats } from "./status-writer.ts";

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
  /** What the status writer did, by kind (empty with RELAY_STATUS_INTERVAL=0). */
  statusStats(): StatusStats;
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
  let rediscovery: NodeJS.Timeout | undefined;
  /** A discovery is in flight (rounds never overlap); one succeeded before (its first plan may say "none served"). */
  let discovering = false;
  let discovered = false;
  const discoveryBackoff = createBackoff(backoff, random);
  const target = { url: config.url, token: config.token, clusterId: config.clusterId };
  // The Gateway API statuses edgepilot computes, written back to the objects' status subresources.
  const statusWriter =
    config.statusIntervalMs > 0
      ? createStatusWriter({
          kc,
          target,
          intervalMs: config.statusIntervalMs,
          timers: nodeTimers,
          backoff,
          random,
          log,
        })
      : undefined;
  const postToIngest = createIngestPoster(target);

  const sender = createDeliverySender({
    batchSize: config.batchSize,
    batchDelayMs: config.batchDelayMs,
    maxQueuedEvents: config.maxQueuedEvents,
    backoff,
    // A delivered batch may change what the control plane computes: a status round follows it.
    post: async (d) => {
      const result = await postToIngest(d);
      const batch = d.type === "resync" || d.lines.length > 0;
      if (statusWriter && batch && classifyPost(result).kind === "delivered") statusWriter.poke();
      return result;
    },
    timers: nodeTimers,
    random,
    log,
    onOverflow: () => {
      paused = true;
      for (const w of watchers.values()) w.pause();
      secrets.pause();
    },
    onDrained: () => {
      paused = false;
      if (stopped.signal.aborted) return;
      for (const w of watchers.values()) w.resume();
      secrets.resume();
    },
    // While paused, the relists come with onDrained anyway.
    onRestart: () => {
      if (paused || stopped.signal.aborted) return;
      for (const w of watchers.values()) w.resync();
      secrets.resync();
    },
    watching: () => [...watchers.keys()],
  });

  const base = {
    kc,
    log,
    listPageSize: config.listPageSize,
    backoff,
    random,
    healthyWatchMs: o.healthyWatchMs,
    logEvents: config.logEvents,
  };
  // Gateway credentials: one watch per Secret a relayed Gateway names (secret-watchers.ts).
  const secrets = createSecretWatchers({ ...base, sender, paused: () => paused });
  // Every kind's watcher sends through this: the Gateways and ReferenceGrants also reach `secrets`,
  // and every object the status writer, so a status someone else changed is written again.
  const deps = {
    ...base,
    sender: {
      event: (kind: string, e: Parameters<typeof sender.event>[1]) => {
        if (statusWriter && typeof e.object === "object" && e.object !== null && e.type !== "DELETED")
          statusWriter.seen(e.object as Record<string, unknown>);
        sender.event(kind, e);
        secrets.observe(e);
      },
      resync: (kind: string, list: Parameters<typeof sender.resync>[1]) => {
        sender.resync(kind, list);
        secrets.observeList(list);
      },
      flush: (ms: number) => sender.flush(ms),
      heartbeat: () => sender.heartbeat(),
      stop: () => sender.stop(),
      stats: () => sender.stats(),
    },
  };

  function add(kind: KindSpec): void {
    if (watchers.has(kind.kind) || stopped.signal.aborted) return;
    const w = createKindWatcher(kind, deps);
    watchers.set(kind.kind, w);
    // While paused a new kind waits too: resume lists it with the others.
    if (paused) w.pause();
    else w.start();
  }

  /** Stops watching `kind`; what it queued stays queued (a later resync of the kind replaces it). */
  function drop(kind: KindSpec): void {
    watchers.get(kind.kind)?.stop();
    watchers.delete(kind.kind);
  }

  /** Applies one discovery: gone kinds resync as empty, moved ones relist at their new version, new ones start. */
  function apply(plan: DiscoveryPlan): void {
    for (const line of plan.log) log(line);
    // Dropped first, so each empty resync already names the kinds watched after this discovery.
    for (const k of plan.remove) drop(k);
    for (const k of plan.remove)
      deps.sender.resync(k.kind, { apiVersion: apiVersionOf(k), kind: k.listKind, metadata: {}, items: [] });
    // No empty resync in between: the new version's list replaces the kind's objects whole, so
    // nothing is deleted that the cluster still holds.
    for (const { from, to } of plan.move) {
      drop(from);
      add(to);
    }
    for (const k of plan.add) add(k);
  }

  /**
   * One round of discovery, planned against what is watched now; undefined when it failed (then a
   * retry is scheduled with backoff), was already running, or the relay stopped.
   */
  async function discover(): Promise<DiscoveryPlan | undefined> {
    if (!config.watchIstio || stopped.signal.aborted || discovering) return undefined;
    clearTimeout(discoveryRetry);
    discoveryRetry = undefined;
    discovering = true;
    let served: KindSpec[];
    try {
      served = await discoverCrdKinds(kc, stopped.signal);
    } catch (err) {
      if (stopped.signal.aborted) return undefined;
      const ms = discoveryBackoff.next();
      log(
        `relay: API discovery of the Istio and Gateway API CRDs failed: ${err instanceof Error ? err.message : err}; ` +
          `watching the CRD kinds as before, retrying in ${ms}ms`,
      );
      discoveryRetry = setTimeout(() => void discover().then(applyIfAny), ms);
      return undefined;
    } finally {
      discovering = false;
    }
    if (stopped.signal.aborted) return undefined;
    discoveryBackoff.reset();
    const watched = [...watchers.values()].map((w) => w.kind).filter((k) => k.relay === "crd");
    const plan = planDiscovery(watched, served, !discovered);
    discovered = true;
    return plan;
  }
  const applyIfAny = (plan: DiscoveryPlan | undefined) => plan && apply(plan);

  return {
    start() {
      const kinds = fixedKinds(config.watchEndpoints, config.istioNamespace);
      const crdGroups = [...new Set(crdKinds.map((k) => k.group))].join(", ");
      const rediscover = config.discoveryIntervalMs > 0 ? `every ${config.discoveryIntervalMs}ms and ` : "";
      log(
        `relay: cluster ${config.clusterId} -> ${config.url}; watching ${kinds.map((k) => k.kind).join(", ")}` +
          `${config.watchIstio ? ` and the CRD kinds discovery finds served (${crdGroups}; rediscovered ${rediscover}at each resync)` : ""}; ` +
          `resync ${config.resyncPeriodMs > 0 ? `every ${config.resyncPeriodMs}ms` : "off"}, ` +
          `batches of ${config.batchSize} or ${config.batchDelayMs}ms, queue limit ${config.maxQueuedEvents}`,
      );
      if (config.token === undefined)
        log("relay: EDGEPILOT_TOKEN is not set: posting without a bearer token");
      // The first discovery settles before any list, so the first resync already names every
      // kind watched (?watching=): the control plane waits for the Istio kinds too. Table order:
      // the fixed kinds, then the Istio ones.
      void discover().then((plan) => {
        for (const k of kinds) add(k);
        applyIfAny(plan);
      });
      heartbeat = setInterval(() => sender.heartbeat(), o.heartbeatMs ?? 5000);
      statusWriter?.start();
      if (config.watchIstio && config.discoveryIntervalMs > 0) {
        rediscovery = setInterval(() => {
          // A pending retry runs discovery anyway, on its own backoff.
          if (discoveryRetry === undefined) void discover().then(applyIfAny);
        }, config.discoveryIntervalMs);
      }
      if (config.resyncPeriodMs > 0) {
        periodic = setInterval(() => {
          if (paused) return;
          log(`relay: periodic resync: relisting ${watchers.size} kinds`);
          for (const w of watchers.values()) w.resync();
          secrets.resync();
          void discover().then(applyIfAny);
        }, config.resyncPeriodMs);
      }
    },
    async stop(timeoutMs) {
      stopped.abort();
      clearInterval(periodic);
      clearInterval(heartbeat);
      clearInterval(rediscovery);
      clearTimeout(discoveryRetry);
      statusWriter?.stop();
      for (const w of watchers.values()) w.stop();
      secrets.stop();
      const flushed = await sender.flush(timeoutMs);
      sender.stop();
      return { flushed, stats: sender.stats() };
    },
    kinds: () => [...watchers.keys()],
    health: () =>
      [...watchers.values()].map((w) => ({ kind: w.kind.kind, listed: w.state().rv !== undefined })),
    stats: () => sender.stats(),
    statusStats: () => statusWriter?.stats() ?? {},
  };
}
