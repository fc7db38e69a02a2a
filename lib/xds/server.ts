/**
 * The read side of one host, built once: the store source, the per-namespace views, the poll hub
 * and poll server, the ADS methods (SotW and Delta over one stream limit), Fetch, REST, status and
 * the debug readers, and the sweep of expired proxy status records, all over one mesh core (its store, feed, sync gate and xDS reporter), as
 * go-control-plane's NewServer composes REST, SotW and Delta over one cache. A host mounts the
 * pieces on its transport (functions/xds.ts, poll.ts, rest.ts, debug.ts, node/ads-h2.ts) and
 * chooses only what it can keep and serve (XdsServerSettings); every default lives in
 * resolveXdsSettings.
 *
 * Nothing here imports an RPC framework: refusals are AdsRefusedError, PollRefusedError and
 * ResponseTooLargeError, which the transports map to their codes (functions/ads-errors.ts).
 */

import type { ChangeFeed } from "../core/change-feed.ts";
import type { XdsReporter } from "../core/hooks.ts";
import type { DiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { type PublishedStatus, publishedStatus } from "../resources/published-status.ts";
import type { SyncState } from "../resources/sync-gate.ts";
import { openGate, type SyncGate } from "../resources/sync-gate.ts";
import type { TypeUrl } from "../resources/xds-types.ts";
import type { Store } from "../store/store.ts";
import { type AdsHandlers, createAdsHandlers } from "./ads-handlers.ts";
import { type AdsLimits, defaultAdsLimits } from "./delta-limits.ts";
import { type FetchResult, fetchDiscovery } from "./fetch.ts";
import { defaultLimits, type Limits } from "./limits.ts";
import { createPollHub } from "./poll-hub.ts";
import { createPollNackLogger, createPollNackRecorder } from "./poll-nack.ts";
import { createPollServer, type PollServer } from "./poll-serve.ts";
import {
  createProxyStatusRecorders,
  proxyStatusWriteIntervalMs,
  startProxyStatusSweep,
} from "./proxy-status.ts";
import { createStoreSource, type ResourceSource } from "./source.ts";
import { createViews, sidecarViewOptions, type Views, type ViewsOptions } from "./view-source.ts";

/** What the server reads from a mesh core (lib/core/mesh-core.ts MeshCore fits; the agent builds its own). */
export interface XdsCore {
  readonly store: Store;
  /**
   * Every push: ADS streams subscribe, the views and the poll hub attach. Absent (the Worker's
   * isolate, which hears no pushes): no ADS and no Poll/Watch, and the views must not cache.
   */
  readonly feed?: ChangeFeed;
  /** Start-up sync: the gate every read path obeys, and (when it can say) the state StatusService shows. */
  readonly sync?: SyncGate & { state?(): Promise<SyncState> };
  /** Where streams and polls report (the core's metrics hooks). */
  readonly xds?: XdsReporter;
}

/** The per-request limits the server applies (lib/config.ts Limits). */
export type XdsLimits = Pick<
  Limits,
  "maxStreams" | "maxNamesPerRequest" | "maxRequestBytes" | "maxResponseBytes"
>;

/** What a host chooses: pure data, so a test can compare the hosts' choices (server-defaults.test.ts). */
export interface XdsServerSettings {
  /** EDGEPILOT_MAX_*: each one omitted takes lib/config.ts's default. */
  limits?: Partial<XdsLimits>;
  /** The registry's domain suffix and discovery selectors (sidecar views); omitted: Istio's defaults. */
  registry?: Parameters<typeof sidecarViewOptions>[0];
  /**
   * Whether the views keep their table between calls. Default true: a host with a feed hears every
   * push that changes a view and drops it then; a host without one must pass false (re-read per call).
   */
  cacheViews?: boolean;
  /** False: every node reads the store's resources as they are (the agent: its cache is already per proxy). */
  sidecarResources?: boolean;
  /**
   * Proxy status records (keys.proxy) written by ADS streams and Poll/Watch NACKs, at most once per
   * `writeIntervalMs` per stream (default 1 s); from start() to stop() the expired ones are swept
   * unless `sweep` is false (a store that expires them itself). False: none is written (Poll NACKs
   * are logged once).
   */
  proxyStatus?: false | { writeIntervalMs?: number; sweep?: boolean };
  /**
   * False: no ADS methods are built, for a host that cannot serve bidi gRPC (Lambda, Workers):
   * its Poll/Watch still attach to the feed. Default: built whenever the core has a feed.
   */
  ads?: false;
}

/** Settings that build ADS over a core with a feed: the type of a host's settings that mounts it. */
export type AdsXdsServerSettings = XdsServerSettings & { ads?: undefined };

/** The settings with every default applied: what the server is actually built with. */
export interface ResolvedXdsSettings {
  limits: XdsLimits;
  /** The ADS stream limits, or false when the host builds no ADS methods. */
  ads: AdsLimits | false;
  views: Omit<ViewsOptions, "store">;
  proxyStatus: false | { writeIntervalMs: number; sweep: boolean };
}

/** Settings plus what only the running host has. */
export interface XdsServerOptions extends XdsServerSettings {
  log: (line: string) => void;
  /** The core's clock (ms); default Date.now. */
  now?: () => number;
  /** Aborted on shutdown: open streams, Watches and waiting polls end cleanly. */
  shutdown?: AbortSignal;
}

/** The published state and start-up sync, as StatusService answers them. */
export interface XdsStatus {
  published: PublishedStatus;
  /** Absent when the core cannot say (StatusService then reports synced and published). */
  sync?: SyncState;
}

/** The pieces of one host's read side; a transport mounts the ones it serves. */
export interface XdsServer {
  readonly settings: ResolvedXdsSettings;
  readonly source: ResourceSource;
  readonly views: Views;
  readonly gate: SyncGate;
  /** Envoy's unary Fetch: one request answered through its node's view; throws ResponseTooLargeError. */
  fetch(typeUrl: TypeUrl, req: DiscoveryRequest): Promise<FetchResult>;
  /** What REST-JSON xDS reads (functions/rest.ts adds the guard and the log). */
  readonly rest: { source: ResourceSource; views: Views; limits: XdsLimits; gate: SyncGate };
  /** What the /debug/* readers read (functions/debug.ts). */
  readonly debug: { store: Store; views: Views; now: () => number; instance: () => Promise<string> };
  status(): Promise<XdsStatus>;
  /** Starts sweeping expired proxy status records when the settings say so (call after the core's start()). */
  start(): void;
  /** Stops the sweep; the host ends its streams through `shutdown`. */
  stop(): void;
  /** The ADS methods, one stream limit for every transport: present when the core has a feed. */
  readonly ads?: AdsHandlers;
  /** DeltaPollService's Poll and Watch, woken by the feed: present when the core has a feed. */
  readonly poll?: PollServer;
}

/** A server over a core with a feed: Poll/Watch are there. */
export interface PollingXdsServer extends XdsServer {
  readonly poll: PollServer;
}

/** A server over a core with a feed that serves ADS too: ADS and Poll/Watch are there. */
export interface StreamingXdsServer extends PollingXdsServer {
  readonly ads: AdsHandlers;
}

/** Applies every default to a host's settings: the one place they live. */
export function resolveXdsSettings(settings: XdsServerSettings): ResolvedXdsSettings {
  const limits: XdsLimits = {
    maxStreams: settings.limits?.maxStreams ?? defaultLimits.maxStreams,
    maxNamesPerRequest: settings.limits?.maxNamesPerRequest ?? defaultLimits.maxNamesPerRequest,
    maxRequestBytes: settings.limits?.maxRequestBytes ?? defaultLimits.maxRequestBytes,
    maxResponseBytes: settings.limits?.maxResponseBytes ?? defaultLimits.maxResponseBytes,
  };
  const { maxStreams, maxNamesPerRequest } = limits;
  const status = settings.proxyStatus ?? {};
  return {
    limits,
    ads: settings.ads !== false && { ...defaultAdsLimits, maxStreams, maxNamesPerRequest },
    views: {
      cache: settings.cacheViews ?? true,
      sidecarResources: settings.sidecarResources ?? true,
      ...(settings.registry && sidecarViewOptions(settings.registry)),
    },
    proxyStatus: status && {
      writeIntervalMs: status.writeIntervalMs ?? proxyStatusWriteIntervalMs,
      // The streams of a process that died leave records only a sweep (or the store's TTL) removes.
      sweep: status.sweep ?? true,
    },
  };
}

/**
 * Builds the read side over `core` and attaches its views and poll hub to `core.feed` (and ADS,
 * unless the settings say `ads: false`); throws when a core without a feed is asked to cache views
 * (nothing would ever drop them).
 */
export function createXdsServer(
  core: XdsCore & { feed: ChangeFeed },
  options: XdsServerOptions & { ads: false },
): PollingXdsServer;
export function createXdsServer(
  core: XdsCore & { feed: ChangeFeed },
  options: XdsServerOptions & { ads?: undefined },
): StreamingXdsServer;
export function createXdsServer(core: XdsCore, options: XdsServerOptions): XdsServer;
export function createXdsServer(core: XdsCore, options: XdsServerOptions): XdsServer {
  const settings = resolveXdsSettings(options);
  const { store, feed, xds } = core;
  const { log } = options;
  const now = options.now ?? Date.now;
  if (!feed && settings.views.cache) {
    throw new Error(
      "createXdsServer: a core without a feed hears no pushes, so its views must not cache (cacheViews: false)",
    );
  }
  const gate: SyncGate = core.sync ?? openGate;
  const source = createStoreSource(store);
  // Per-namespace views, one table for every read path; a push that changes a view drops it.
  const views = createViews({ store, ...settings.views, log });
  const limits = settings.limits;
  const record = settings.proxyStatus;
  const status = async (): Promise<XdsStatus> => {
    const published = await publishedStatus(store);
    const sync = await core.sync?.state?.();
    return { published, ...(sync && { sync }) };
  };
  let stopSweep: (() => void) | undefined;
  const server: XdsServer = {
    settings,
    source,
    views,
    gate,
    async fetch(typeUrl, req) {
      const view = views.source(await views.forNode(req.node), source);
      return fetchDiscovery(view, typeUrl, req, await gate.synced(), limits.maxResponseBytes);
    },
    rest: { source, views, limits, gate },
    debug: { store, views, now, instance: async () => (await core.sync?.state?.())?.instance ?? "" },
    status,
    start() {
      if (record !== false && record.sweep) stopSweep ??= startProxyStatusSweep({ store, log, now });
    },
    stop() {
      stopSweep?.();
      stopSweep = undefined;
    },
  };
  if (!feed) return server;
  feed.attach(views);
  // Waiting polls and Watch streams: woken by each push on the feed, ended by shutdown.
  const hub = createPollHub(source);
  const poll = createPollServer({
    source,
    hub,
    limits,
    gate,
    views,
    // A Poll/Watch NACK goes into the node's proxy status, as an ADS stream's does; or is logged once.
    onNack: record ? createPollNackRecorder({ store, log, now }) : createPollNackLogger(log),
    ...(options.shutdown && { shutdown: options.shutdown }),
    ...(xds && { xds }),
  });
  feed.attach({
    publish: (push) => hub.publish(push),
    get open() {
      return poll.open;
    },
  });
  if (settings.ads === false) return { ...server, poll };
  const ads = createAdsHandlers({
    source,
    views,
    pushes: feed,
    log,
    limits: settings.ads,
    gate,
    maxResponseBytes: limits.maxResponseBytes,
    now,
    // Every stream's status through one set of recorders: one write timer for all of them.
    ...(record && {
      statuses: createProxyStatusRecorders({ store, log, minIntervalMs: record.writeIntervalMs }),
    }),
    ...(options.shutdown && { shutdown: options.shutdown }),
    ...(xds && { xds }),
  });
  return { ...server, ads, poll };
}
