/**
 * Whether the registry is synced (Istio #24117, PR #26142: istiod serves no xDS until its
 * informers have synced), as a pure function of a stored record and `now`. Until it is, no proxy
 * may be told to remove what it holds: an empty store after a restart is not an empty mesh.
 *
 * - A cluster is synced once a resync of its Services and of its endpoint kind (EndpointSlice,
 *   or Endpoints with PILOT_USE_ENDPOINT_SLICE=false) arrived in this record's lifetime, and, once
 *   the relay said which kinds it watches there (a resync's `watching`), a resync of each of them:
 *   a ServiceEntry is not published without the WorkloadEntries that give it endpoints.
 * - The registry is synced once at least one cluster is synced and every cluster heard from is,
 *   or once `timeoutMs` (PILOT_SYNC_TIMEOUT) passed since the record began; then it stays synced.
 * - Each cluster's Pod resync is noted too, outside "synced": until it arrives (or the timeout),
 *   assignments with endpoints waiting for their pod are held (held-pods.ts).
 *
 * The record lives in the Store (keys.syncRecord()), so its lifetime is the state's: a memory
 * store starts a new one at every start (unsynced, timeout counting from the process start); a
 * durable store (Durable Object, file) loads the old one, whose clusters were synced or whose
 * timeout passed long ago, so its loaded state counts as synced at once.
 */

import type { ClusterSyncState, SyncState } from "../resources/sync-gate.ts";

/** Which resyncs of one cluster have arrived. */
export interface ClusterSync {
  services: boolean;
  endpointSlices: boolean;
  endpoints: boolean;
  /**
   * A Pod resync arrived (lib/push/held-pods.ts). Not part of "synced"; absent in records stored
   * before it existed: read as false (such a record's timeout passed long ago, so nothing is held).
   */
  pods?: boolean;
  /**
   * The kinds the relay said it watches in this cluster (its last resync's `watching`), sorted; the
   * cluster is synced only once each has been resynced too. Absent: no sender said (the rule above alone).
   */
  watching?: string[];
  /** The kinds resynced in this lifetime, sorted (only kept once `watching` is known). */
  resynced?: string[];
}

/** The stored record: one per state lifetime. */
export interface SyncRecord {
  /** Names this state's lifetime; ingest answers carry it so a relay notices a new one (a restart). */
  instance: string;
  /** When this state began (ms since epoch): PILOT_SYNC_TIMEOUT counts from here. */
  since: number;
  /** Every cluster heard from (any accepted ingest call naming it), and its resyncs so far. */
  clusters: Record<string, ClusterSync>;
  /**
   * When every cluster heard from was first synced (ms). Synced stays synced, as istiod's start-up
   * gate: a cluster first heard from later is shown unsynced but closes no gate again.
   */
  syncedAt?: number;
  /**
   * When a debounce turn that began after the registry synced had flushed everything queued (ms):
   * what the resyncs brought is published, so a removal now is a real one. Until then a push
   * still on its way would look like every resource missing.
   */
  publishedAt?: number;
}

/** What the decision reads of the configuration. */
export interface SyncOptions {
  /** PILOT_SYNC_TIMEOUT (ms). */
  timeoutMs: number;
  /** PILOT_USE_ENDPOINT_SLICE: which endpoint kind's resync counts. */
  useEndpointSlice: boolean;
}

/** A record for a state that begins now. */
export function newSyncRecord(instance: string, now: number): SyncRecord {
  return { instance, since: now, clusters: {} };
}

/**
 * The record after an accepted ingest call at `now` for `cluster` (a resync of `resyncKind` when
 * given), or undefined when it changes nothing (so the caller writes nothing).
 */
export function noteIngest(
  record: SyncRecord,
  now: number,
  options: SyncOptions,
  cluster: string,
  resyncKind?: string,
  watching?: readonly string[],
): SyncRecord | undefined {
  const had = Object.hasOwn(record.clusters, cluster) ? record.clusters[cluster] : undefined;
  const before: ClusterSync = had ?? {
    services: false,
    endpointSlices: false,
    endpoints: false,
    pods: false,
  };
  const after: ClusterSync = { ...before };
  if (resyncKind === "Service") after.services = true;
  else if (resyncKind === "EndpointSlice") after.endpointSlices = true;
  else if (resyncKind === "Endpoints") after.endpoints = true;
  else if (resyncKind === "Pod") after.pods = true;
  if (watching !== undefined) after.watching = [...new Set(watching)].sort();
  if (resyncKind !== undefined && after.watching !== undefined)
    after.resynced = [...new Set([...(after.resynced ?? []), resyncKind])].sort();
  if (had && JSON.stringify(after) === JSON.stringify(had)) return undefined;
  const next: SyncRecord = { ...record, clusters: { ...record.clusters, [cluster]: after } };
  if (next.syncedAt === undefined && clustersSynced(decideSync(next, now, options).clusters))
    next.syncedAt = now;
  return next;
}

function clustersSynced(clusters: readonly ClusterSyncState[]): boolean {
  return clusters.length > 0 && clusters.every((c) => c.synced);
}

/** Decides whether the registry is synced at `now`. */
export function decideSync(record: SyncRecord, now: number, options: SyncOptions): SyncState {
  const clusters = Object.keys(record.clusters)
    .sort()
    .map((cluster): ClusterSyncState => {
      const c = record.clusters[cluster] as ClusterSync;
      const endpoints = options.useEndpointSlice ? c.endpointSlices : c.endpoints;
      const resynced = new Set(c.resynced);
      const waitingFor = c.watching?.filter((k) => !resynced.has(k));
      const synced = c.services && endpoints && (waitingFor === undefined || waitingFor.length === 0);
      return {
        cluster,
        services: c.services,
        endpoints,
        synced,
        pods: c.pods === true,
        ...(waitingFor !== undefined && { waitingFor }),
      };
    });
  const timeoutAt = record.since + options.timeoutMs;
  const timedOut = now >= timeoutAt;
  const synced = record.syncedAt !== undefined || clustersSynced(clusters) || timedOut;
  const published = synced && record.publishedAt !== undefined;
  return { synced, published, timedOut, timeoutAt, instance: record.instance, clusters };
}

/**
 * The record after a debounce turn that began at `turnStartedAt` and left nothing queued that
 * arrived before it began (`complete`), or undefined when it changes nothing.
 * Such a turn flushed everything queued before it began, so once it began after the registry
 * synced, what the sync brought is published.
 */
export function notePublished(
  record: SyncRecord,
  turnStartedAt: number,
  complete: boolean,
  now: number,
  options: SyncOptions,
): SyncRecord | undefined {
  if (!complete || record.publishedAt !== undefined) return undefined;
  const syncedAt = Math.min(record.syncedAt ?? Number.POSITIVE_INFINITY, record.since + options.timeoutMs);
  if (turnStartedAt < syncedAt) return undefined;
  return { ...record, publishedAt: now };
}

/**
 * The log lines for a change from `before` to `after` (none when nothing changed): each cluster
 * that became synced, the registry becoming synced (a warning when the timeout let it), and its
 * state published (removals reach proxies again).
 */
export function syncTransitions(before: SyncState | undefined, after: SyncState): string[] {
  const lines: string[] = [];
  const was = new Map(before?.clusters.map((c) => [c.cluster, c.synced]));
  for (const c of after.clusters) {
    if (c.synced && was.get(c.cluster) !== true) lines.push(`sync: cluster ${c.cluster} synced`);
  }
  const waiting = after.clusters.filter((c) => !c.synced).map((c) => c.cluster);
  const what = waiting.length > 0 ? `waiting for ${waiting.join(", ")}` : "no cluster heard from";
  if (before?.synced !== after.synced) {
    if (!after.synced) {
      lines.push(`sync: registry not synced: ${what}; proxies keep what they hold until it is`);
    } else if (!after.timedOut || clustersSynced(after.clusters)) {
      lines.push(`sync: registry synced (${after.clusters.length} cluster(s))`);
    } else {
      lines.push(
        `sync: WARNING: PILOT_SYNC_TIMEOUT passed before the registry synced (still ${what}); ` +
          "serving what the store holds, removals included",
      );
    }
  }
  if (after.published && before?.published !== true)
    lines.push("sync: the synced registry is published; proxies may be told to remove what they hold again");
  return lines;
}
