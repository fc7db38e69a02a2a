/**
 * The flush: merge queued PushRequests, regenerate what they touch, publish resources with
 * content-hash versions, bump the push counter, and only then delete the queued requests.
 * A crash anywhere loses nothing (the queue is still there, and the lease marks the crash);
 * flushing the same queue twice publishes the same bytes and versions.
 */

import { logSafe } from "../log-safe.ts";
import { mergeAll, type PushRequest } from "../model/index.ts";
import type { Pace } from "../pace.ts";
import { type MeshEnvOverrides, readEffectiveMesh, sameMesh } from "../registry/mesh/effective-mesh.ts";
import type { PushVersion, ResourceChange } from "../resources/changes.ts";
import { loadExternalHosts } from "../resources/external-hosts.ts";
import { ambiguousRangesWarning, createNetworkResolver } from "../resources/network-resolve.ts";
import {
  contextFits,
  createPushContext,
  loadPushConfigs,
  type PushContext,
  type PushContextOptions,
  updatePushContext,
} from "../resources/push-context.ts";
import type { PlannedService } from "../resources/push-services.ts";
import { secretChanges } from "../resources/secret-changes.ts";
import type { GenerateContext, Generator } from "../resources/types.ts";
import { TypeUrl as T } from "../resources/xds-types.ts";
import { keys, type Store, update } from "../store/index.ts";
import { type DanglingRoute, describeDanglingRoute } from "./consistency.ts";
import { acquireLease, expireLease, renewLease } from "./flush-lease.ts";
import { type EndpointsHeard, type HeldFor, noteHolds } from "./held-endpoints.ts";
import type { PodsPending } from "./held-pods.ts";
import { afterMeshCheck, appliedMesh, namesMeshConfig } from "./mesh-change.ts";
import {
  finishNetworks,
  loadNetworks,
  notePlanned,
  type PlannedGateways,
  scopeRequest,
} from "./network-refresh.ts";
import { planChunk } from "./plan.ts";
import { publishChunk } from "./publish-chunk.ts";
import { needsRefresh } from "./push-refresh.ts";
import type { QueuedPush } from "./queue.ts";
import { namesPolicy, servicesInScope, withRoutesTo } from "./scope.ts";
import { loadViews } from "./views.ts";

export interface FlushDeps {
  store: Store;
  /** Generators by type URL; a full push runs all of them, an incremental one only EDS. */
  generators: readonly Generator[];
  context: GenerateContext;
  now: () => number;
  /** How long a flush may hold the lease before another instance takes over (ms). */
  leaseMs?: number;
  /** How many push log entries to keep. */
  keepLog?: number;
  /** Services planned and published at a time; default chunkServices. */
  chunkServices?: number;
  /** Encoded bytes one push's changes may carry; default maxFeedBodyBytes. */
  maxFeedBodyBytes?: number;
  /** The mesh settings the environment set explicitly (TRUST_DOMAIN, ...): they win over the stored MeshConfig. */
  meshEnv?: MeshEnvOverrides;
  /** ISTIO_NAMESPACE: the namespace whose network label gives its cluster's network; default istio-system. */
  systemNamespace?: string;
  /** Where the flush reports what it published but could not honour (dangling routes, configs not applied). */
  log?: (line: string) => void;
  /**
   * Given only while the registry is not synced: whose endpoint resync arrived. Services whose
   * endpoints were not heard get no ClusterLoadAssignment yet (held-endpoints.ts). Absent: synced.
   */
  endpointsHeard?: EndpointsHeard;
  /** Given only while a cluster's Pod resync is awaited: services with endpoints waiting for pods are held (held-pods.ts). */
  podsPending?: PodsPending;
  /**
   * Awaited before the first service and after each one (lib/pace.ts createPace: yields to the
   * event loop once a slice is used up), so a flush of a whole mesh over an in-process store (no
   * I/O to wait for) does not hold the loop for all of it. Absent: the flush does not yield.
   */
  pace?: Pace;
  /**
   * The push context the last flush in this process left (FlushResult.context): this flush derives
   * its own from it when it still describes the store's push version. Absent: loaded whole.
   */
  lastContext?: PushContext;
}

/**
 * The most changes, and ConfigKeys of the request, one push log entry lists (the rest are only
 * counted). A first publish of 10k services changes 40k resources: listed whole, its entry would
 * pass the 2 MB row limit of a Durable Object's SQLite, and the push would fail after publishing.
 */
export const maxLoggedNames = 1000;

/** How many services a flush plans and publishes at a time: what one flush holds in memory. */
export const chunkServices = 256;

/**
 * The most encoded bytes one push's changes carry to the streams (about the first-subscription
 * bytes of a 10k-service mesh); what is past it streams read from the store.
 */
export const maxFeedBodyBytes = 16 * 1024 * 1024;

/** What push `seq` changed, stored under keys.pushLog(seq): bounded, see maxLoggedNames. */
export interface PushLogEntry {
  seq: number;
  at: number;
  /** The merged request; `configsUpdated` lists at most maxLoggedNames of its `configsCount`. */
  request: PushRequest & { configsCount?: number };
  /** The first maxLoggedNames changes, names and versions only. */
  changes: ResourceChange[];
  /** How many resources the push changed. */
  changeCount: number;
  /**
   * Set when the flush took over from one that crashed: the crashed one may have published changes
   * nobody announced, so a reader of the log (lib/core/store-follower.ts) re-reads everything.
   */
  recovered?: true;
  /**
   * Set on a refresh push (lib/push/push-refresh.ts): sidecar resources may have changed beyond
   * `changes`. Older records said it with one change of legacyRefreshType instead.
   */
  refresh?: true;
}

export type FlushResult =
  | { kind: "busy" }
  | {
      kind: "done";
      /** The push counter after this flush (unchanged when nothing changed). */
      version: number;
      request: PushRequest | undefined;
      /** What the push changed. */
      changes: readonly ResourceChange[];
      /** A refresh push (push-refresh.ts): Envoy sidecar resources may have changed beyond `changes`. */
      refresh?: true;
      /** True when this flush took over from one that crashed. */
      recovered: boolean;
      /** The push context this push left (absent when nothing was queued): the next flush derives from it. */
      context?: PushContext;
    };

/** Flushes the queued requests under `queueKeys`. Returns busy when another flush holds the lease. */
export async function flush(deps: FlushDeps, queueKeys: readonly string[]): Promise<FlushResult> {
  const { store } = deps;
  const lease = await acquireLease(deps);
  if (!lease) return { kind: "busy" };
  // Whether publishing began, and whether everything after it completed.
  let publishing = false;
  let done = false;
  try {
    const queued = await store.getMany<QueuedPush>(queueKeys);
    const merged = mergeAll([...queued.values()].map((e) => e.value.request));
    // What the push generates for: the merged request, its MeshConfig keys resolved (mesh-change.ts).
    let pushed = merged;
    const changes: ResourceChange[] = [];
    // Under the lease nothing else moves the push version until this flush bumps it.
    let version = (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;
    let context: PushContext | undefined;
    let refresh = false;
    if (merged) {
      // Paced (when the host gives a pace) before the first service and between services
      // (planChunk): the event loop runs between slices, as it always did over a store with real
      // I/O to wait for. What other requests read meanwhile is whole chunks published (each
      // checked, make before break), the push not yet announced; what ingest changes meanwhile
      // queues the next push.
      const { pace } = deps;
      const options = contextOptions(deps);
      // The push context of the last push, when this process built it: this one is derived from
      // it. An EDS-only push changes no config: it keeps the last one's (Istio's EDS pushes
      // generate from the current PushContext); a Full push reads them again.
      const last = deps.lastContext;
      const prior = last && contextFits(last, version, options) ? last : undefined;
      const kept = merged.full ? undefined : prior;
      // The mesh settings are read again only when the push names MeshConfig (or everything); when
      // they are what the last push had, nothing is regenerated for them (mesh-change.ts).
      const meshNamed = namesMeshConfig(merged);
      const mesh = meshNamed || !prior ? await readEffectiveMesh(store, options.meshEnv) : prior.mesh;
      const before = meshNamed ? (prior?.mesh ?? (await appliedMesh(store, options))) : undefined;
      const meshChanged = before !== undefined && !sameMesh(mesh, before);
      const request = before ? afterMeshCheck(merged, meshChanged) : merged;
      pushed = request;
      // The security policies are read again only when the push names one (Istio's updateContext),
      // or when the root namespace they are indexed for may have changed.
      const policies =
        prior && !namesPolicy(request) && !meshChanged ? { security: prior.security, mesh } : { mesh };
      const { routing, visibility, security, gatewayApi } =
        kept ?? (await loadPushConfigs(store, options, policies));
      // What the generators read of the mesh beside the domain suffix.
      const generate = mesh.enableAutoMtls ? deps.context : { ...deps.context, enableAutoMtls: false };
      // Routes to hosts outside Kubernetes are judged against the ServiceEntries (external-hosts.ts);
      // an EDS-only push generates no route.
      const externalHosts = routing && request.full ? await loadExternalHosts(store) : undefined;
      // The networks endpoints are resolved against (network-refresh.ts); a change of how they
      // resolve regenerates every service, a change of gateways alone none.
      const networks = await loadNetworks(store, request, deps.systemNamespace);
      const resolver = createNetworkResolver(networks.table);
      const generateContext = resolver ? { ...generate, networks: resolver } : generate;
      const scoped = scopeRequest(request, networks);
      // Per-namespace views (views.ts): overlays of the chunks' services, then the view table.
      const views = await loadViews({
        ...deps,
        context: generateContext,
        mesh,
        meshChanged,
        ...(routing && { routing }),
        ...(externalHosts && { externalHosts }),
        ...(kept && { sidecars: kept.sidecars }),
      });
      const scope = withRoutesTo(
        await servicesInScope(store, scoped, mesh.rootNamespace),
        scoped,
        routing,
        externalHosts,
      );
      const refs = await views.widen(scoped, scope);
      // Logged on full pushes only: an endpoint change does not repeat them.
      if (deps.log && request.full)
        for (const line of [...(routing?.notApplied ?? []), ...views.notApplied])
          deps.log(`push: ${logSafe(line)}`);
      const chunk = deps.chunkServices ?? chunkServices;
      const feed = { bodyBytes: 0, maxBytes: deps.maxFeedBodyBytes ?? maxFeedBodyBytes };
      const dangling: DanglingRoute[] = [];
      const holds: HeldFor[] = [];
      const gateways: PlannedGateways = { hosts: new Set(), gateways: [] };
      // Kept only while the last context's services are held (a reader here serves Envoy
      // sidecars) and for one chunk at most (what a flush holds): the next context takes them as
      // planned instead of reading them again; past it, it reads every service on first ask.
      const planned =
        prior?.servicesRead && request.configsUpdated !== null && refs.length <= chunk
          ? new Map<string, PlannedService>()
          : undefined;
      if (pace) await pace();
      // In chunks, so a flush of the whole mesh never holds every plan (a Durable Object has
      // 128 MB); each chunk is checked before any of it is published.
      for (let at = 0; at < refs.length; at += chunk) {
        const plans = await planChunk(
          {
            ...deps,
            context: generateContext,
            filterView: visibility.filterView,
            ...(security.peerAuthentications.length > 0 && { peerMtls: security }),
            ...(routing && { routing }),
            ...(externalHosts && { externalHosts }),
          },
          refs.slice(at, at + chunk),
          scoped.full,
        );
        const problems = plans.flatMap((p) => p.problems);
        if (problems.length > 0) {
          const what = at === 0 ? "nothing published" : `the ${at} service(s) before them were published`;
          throw new Error(`flush: inconsistent resources, ${what}: ${problems.join("; ")}`);
        }
        for (const p of plans) {
          dangling.push(...p.dangling);
          notePlanned(gateways, networks, p.ref, p.records);
        }
        if (deps.endpointsHeard || deps.podsPending)
          for (const p of plans) holds.push([p.ref, p.endpointsHeld]);
        if (planned)
          for (const p of plans)
            planned.set(`${p.ref.namespace}/${p.ref.hostname}`, { records: p.records, view: p.view });
        publishing = true;
        changes.push(...(await publishChunk(store, plans, feed)));
        changes.push(...(await views.publishChunk(plans, scoped.full)));
        await renewLease(deps, lease);
      }
      changes.push(...(await views.finish()));
      changes.push(...(await secretChanges(store, request.configsUpdated)));
      const networksChanged = await finishNetworks(store, networks, gateways, deps.context.domainSuffix);
      if (networksChanged) changes.push(networksChanged);
      const ambiguous = resolver && ambiguousRangesWarning(resolver.ambiguous());
      if (ambiguous && deps.log) deps.log(`push: ${ambiguous}`);
      await noteHolds(
        store,
        holds,
        deps.now(),
        deps.endpointsHeard !== undefined,
        deps.podsPending?.clusters,
      );
      await logDangling(deps, dangling);
      // Sidecar resources are built apart from what was published: a change only they may reflect
      // is announced all the same.
      refresh = needsRefresh(scoped, changes);
      if (changes.length > 0 || lease.recovered || refresh)
        version = await bumpVersion(deps, request, changes, lease.recovered, refresh);
      // Recorded once the push that generated with them is written: a flush taking over after a
      // crash before this line still sees the settings as changed and regenerates.
      if (meshChanged) await store.put(keys.meshApplied(), mesh);
      const parts = {
        mesh,
        routing,
        sidecars: views.allSidecars,
        table: views.table(),
        visibility,
        security,
        gatewayApi,
      };
      const hosts = externalHosts && (() => Promise.resolve(externalHosts));
      context = prior
        ? updatePushContext(prior, store, {
            version,
            parts,
            full: request.full,
            ...(hosts && { externalHosts: hosts }),
            planned: planned ?? null,
          })
        : createPushContext(store, version, options, parts, hosts);
    }
    for (const key of queued.keys()) await store.delete(key);
    done = true;
    return {
      kind: "done",
      version,
      request: pushed,
      changes,
      ...(refresh && { refresh: true as const }),
      recovered: lease.recovered,
      ...(context && { context }),
    };
  } finally {
    if (publishing && !done) await expireLease(store, lease.version);
    else await store.delete(keys.flushing(), { ifVersion: lease.version });
  }
}

/** The options a flush's push context is built with (and a reader's must match to share it). */
export function contextOptions(deps: Pick<FlushDeps, "context" | "meshEnv">): PushContextOptions {
  return {
    domainSuffix: deps.context.domainSuffix,
    ...(deps.meshEnv && { meshEnv: deps.meshEnv }),
  };
}

/**
 * Routes to clusters nobody publishes are valid in Istio and never hold a push back: they are
 * published (the calls fail UNAVAILABLE) and logged once per flush each. Another host's cluster a
 * route names as it is counts as dangling only when, after the whole flush, the store lacks it.
 */
async function logDangling(deps: FlushDeps, dangling: readonly DanglingRoute[]): Promise<void> {
  if (dangling.length === 0 || !deps.log) return;
  const others = [...new Set(dangling.filter((d) => d.reason === undefined).map((d) => d.cluster))];
  const held = await deps.store.getMany(others.map((c) => keys.resource(T.cluster, c)));
  const seen = new Set<string>();
  for (const d of dangling) {
    if (d.reason === undefined && held.has(keys.resource(T.cluster, d.cluster))) continue;
    const line = describeDanglingRoute(d);
    if (seen.has(line)) continue;
    seen.add(line);
    deps.log(`push: ${line}`);
  }
}

async function bumpVersion(
  deps: FlushDeps,
  request: PushRequest,
  changes: readonly ResourceChange[],
  recovered: boolean,
  refresh: boolean,
): Promise<number> {
  const at = deps.now();
  const next = await update<PushVersion>(deps.store, keys.pushVersion(), (current) => ({
    version: (current?.value.version ?? 0) + 1,
    at,
  }));
  const seq = (next as PushVersion).version;
  // The log names what changed; the bytes live under keys.resource(), not once more per push.
  const logged = changes.slice(0, maxLoggedNames).map(({ typeUrl, name, version, view }) => ({
    typeUrl,
    name,
    version,
    ...(view !== undefined && { view }),
  }));
  const configs = request.configsUpdated;
  const entry: PushLogEntry = {
    seq,
    at,
    request:
      configs && configs.length > maxLoggedNames
        ? { ...request, configsUpdated: configs.slice(0, maxLoggedNames), configsCount: configs.length }
        : request,
    changes: logged,
    changeCount: changes.length,
    ...(recovered && { recovered: true as const }),
    ...(refresh && { refresh: true as const }),
  };
  await deps.store.put(keys.pushLog(seq), entry);
  const keep = deps.keepLog ?? 1000;
  if (seq > keep) await deps.store.delete(keys.pushLog(seq - keep));
  return seq;
}
