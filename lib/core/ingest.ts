/**
 * The ingest half of the mesh core: applies watch-event batches, resyncs and admissions one at a
 * time (an object's events apply in the order they arrived; over a shared store, one at a time
 * across every core, under the store's ingest lease), each all or nothing on a staged view
 * (lib/ingest/atomic.ts); then notes the call for start-up sync, asks for a debounce turn when a
 * push was queued, and tells the observers. Transports (the hono app) decode and validate first.
 */

import { indexExternalHosts } from "../ingest/external-hosts.ts";
import {
  type ApplyDeps,
  type ApplySummary,
  applyAtomically,
  applyEvents,
  type ResyncList,
  resync,
  type WatchEvent,
} from "../ingest/index.ts";
import { applyMeshFile, type MeshFile, type MeshFileResult } from "../ingest/mesh-file.ts";
import type { MeshRecordKind } from "../ingest/mesh-records.ts";
import { migrateUnbucketedPodIps } from "../ingest/pod-ip-index.ts";
import { migrateLegacyRefs } from "../ingest/ref-index.ts";
import type { Rejection } from "../ingest/rejected.ts";
import { logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import type { Pace } from "../pace.ts";
import type { SyncTracker } from "../push/sync-tracker.ts";
import { createSerial } from "../serial.ts";
import type { IngestReport } from "./hooks.ts";
import { createIngestLease, type IngestLeaseOptions } from "./ingest-lease.ts";

/** What the ingest core needs: the store, clock and registry options, and who to tell. */
export interface IngestCoreOptions extends Omit<ApplyDeps, "pace"> {
  /** Start-up sync: notes each accepted call and resync; names the state's instance. */
  sync?: Pick<SyncTracker, "ingested" | "instance" | "state">;
  /** Called after a batch queued a push, so the host's driver runs a debounce turn. */
  requestTurn?: () => void | Promise<void>;
  /** Told of every applied call (the core's observers). */
  onIngest?: (report: IngestReport) => void;
  log?: (line: string) => void;
  /**
   * Set when the store is shared with other cores: each batch also holds the store's ingest lease
   * (lib/core/ingest-lease.ts) from its first read to its commit, so batches of every core apply
   * in one serial order.
   */
  lease?: Omit<IngestLeaseOptions, "store">;
}

/** The calls a transport maps its requests to. Each throws what applying threw (nothing applied). */
export interface IngestCore {
  /** The start-up sync state ingest answers carry (instance id, /ready's body), when tracked. */
  readonly sync: Pick<SyncTracker, "instance" | "state"> | undefined;
  /** Applies validated watch events for `cluster`, ordered by resourceVersion. */
  events(cluster: string, events: readonly WatchEvent[], pace?: Pace): Promise<ApplySummary>;
  /** Applies a validated complete list and deletes what the cluster held of its kind and it lacks. */
  resync(cluster: string, list: ResyncList, pace?: Pace): Promise<ApplySummary>;
  /** Applies one admission change as it comes (admission requests carry no usable order). */
  admission(cluster: string, event: WatchEvent, pace?: Pace): Promise<ApplySummary>;
  /**
   * Applies a mesh file's content as its record (undefined: none configured), in turn with the
   * other calls, and asks for a debounce turn when it queued a push (lib/ingest/mesh-file.ts).
   */
  meshFile(kind: MeshRecordKind, file: MeshFile | undefined): Promise<MeshFileResult>;
}

/** Builds the ingest core; its batches queue behind each other, whatever transport sends them. */
export function createIngestCore(options: IngestCoreOptions): IngestCore {
  const { store, now, registry, sync } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  const serial = createSerial();
  const lease = options.lease && createIngestLease({ store, ...options.lease });
  // A durable store may hold the reverse index and the pod IPs in the layout of an older version:
  // the first batch rewrites them, inside the batch (all or nothing with it), before any event reads them.
  let migrated = false;
  const apply = <T>(pace: Pace | undefined, fn: (deps: ApplyDeps) => Promise<T>): Promise<T> =>
    serial(() => (lease ? lease.run((held) => applyOnce(pace, fn, held.beforeCommit)) : applyOnce(pace, fn)));
  const applyOnce = async <T>(
    pace: Pace | undefined,
    fn: (deps: ApplyDeps) => Promise<T>,
    beforeCommit?: () => Promise<void>,
  ): Promise<T> => {
    const result = await applyAtomically(
      { store, now, registry, ...(pace && { pace }) },
      async (deps) => {
        if (!migrated) {
          const moved = await migrateLegacyRefs(deps.store);
          if (moved > 0)
            log(`ingest: moved ${moved} reverse-index key(s) of the previous layout into buckets`);
          const ips = await migrateUnbucketedPodIps(deps.store);
          if (ips > 0) log(`ingest: moved ${ips} pod IP key(s) of the previous layout into buckets`);
          const hosts = await indexExternalHosts(deps.store);
          if (hosts > 0) log(`ingest: indexed the hosts of ${hosts} ServiceEntry service record(s)`);
        }
        return fn(deps);
      },
      beforeCommit && { beforeCommit },
    );
    migrated = true;
    return result;
  };
  const after = async (report: IngestReport, watching?: readonly string[]): Promise<ApplySummary> => {
    logRejections(log, report.cluster, report.summary.rejected);
    await sync?.ingested(report.cluster, report.kind, watching);
    if (report.summary.push) await options.requestTurn?.();
    options.onIngest?.(report);
    return report.summary;
  };
  return {
    sync,
    async events(cluster, events, pace) {
      const summary = await apply(pace, (deps) => applyEvents(deps, cluster, events));
      return after({ call: "events", cluster, summary, events });
    },
    async resync(cluster, list, pace) {
      const summary = await apply(pace, (deps) => resync(deps, cluster, list));
      if (summary.deleted)
        log(`ingest: resync of ${list.kind} in ${cluster} deleted ${summary.deleted} missed object(s)`);
      return after({ call: "resync", cluster, kind: list.kind, summary }, list.watching);
    },
    async admission(cluster, event, pace) {
      const summary = await apply(pace, (deps) =>
        applyEvents(deps, cluster, [event], { trackVersions: false }),
      );
      return after({ call: "admission", cluster, summary, events: [event] });
    },
    async meshFile(kind, file) {
      const result = await apply(undefined, (deps) => applyMeshFile(deps, kind, file));
      if (result.ok && result.pushed) await options.requestTurn?.();
      return result;
    },
  };
}

/** Refusals logged per call at most; the answer and /debug/configz?rejected list them all. */
const maxRejectionLines = 20;

/** Logs each refused object version once (a repeat was logged when it was first refused). */
function logRejections(log: (line: string) => void, cluster: string, rejected: readonly Rejection[]): void {
  const fresh = rejected.filter((r) => !r.repeated);
  for (const r of fresh.slice(0, maxRejectionLines)) {
    const at = r.namespace === "" ? r.name : `${r.namespace}/${r.name}`;
    logWarn(
      log,
      `ingest: skipped ${r.kind} ${at} (resourceVersion ${logSafe(r.resourceVersion, 40)}) of cluster ${cluster}: ` +
        `${r.field ? `${r.field}: ` : ""}${r.message}; its last valid version, if any, stays served`,
    );
  }
  if (fresh.length > maxRejectionLines)
    logWarn(
      log,
      `ingest: skipped ${fresh.length - maxRejectionLines} more refused object(s) of cluster ${cluster}`,
    );
}
