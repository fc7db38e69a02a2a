/**
 * Resync: a complete list of one kind in one cluster. Every item is applied like an ADDED event
 * (replays change nothing), and whatever the cluster held of that kind that the list lacks is
 * deleted. This is how a missed DELETE is repaired. A list older than an object's recorded
 * resourceVersion neither deletes nor overwrites it: its items are stale for that object, and an
 * object the list lacks may have been created after the list was taken.
 */

import { keys, listAll } from "../store/index.ts";
import {
  type ApplyDeps,
  type ApplySummary,
  applyEvent,
  count,
  emptySummary,
  ingestContext,
  noteConfigs,
  queuePush,
  refusal,
} from "./apply.ts";
import { createBatchPushes } from "./batch-pushes.ts";
import type { KubeObject, RejectedEvent } from "./events.ts";
import { kindHandlers } from "./kinds/index.ts";
import { compareResourceVersions, type ObjectRecord } from "./objects.ts";
import { clearRejected, noteRejected } from "./rejected.ts";

/** A validated list: its kind's items, and the list's own resourceVersion ("" when absent). */
export interface ResyncList {
  kind: string;
  resourceVersion: string;
  items: KubeObject[];
  /** Items the kind's rules refuse, with their index in the list: skipped, reported, their last valid version kept. */
  rejected?: (RejectedEvent & { index: number })[];
  /** The kinds the sender watches in this cluster (the relay's `watching`): start-up sync waits for each one's resync. */
  watching?: string[];
}

/** Applies the list, deletes what it lacks, and queues one merged push. */
export async function resync(deps: ApplyDeps, cluster: string, list: ResyncList): Promise<ApplySummary> {
  const ctx = ingestContext(deps, cluster);
  const summary: ApplySummary = { ...emptySummary(cluster, list.items.length), deleted: 0 };
  const pushes = createBatchPushes();
  const present = new Set<string>();
  const listed = { add: 0, update: 0, delete: 0 };
  const refused: (RejectedEvent & { index: number })[] = [];
  for (const [index, obj] of list.items.entries()) {
    await deps.pace?.();
    present.add(keys.object(cluster, list.kind, obj.metadata.namespace ?? "", obj.metadata.name));
    const why = refusal(ctx, obj);
    if (why) {
      refused.push({ type: "REJECTED", object: obj, ...why, index });
      continue;
    }
    let existed = false;
    const outcome = await applyEvent(ctx, false, obj, {
      trackVersions: true,
      recorded: (r) => {
        existed = r !== undefined && !r.deleted;
      },
    });
    if (outcome !== "stale" && outcome.kind === "applied") listed[existed ? "update" : "add"]++;
    count(summary, pushes, list.kind, outcome);
  }
  // A refused item is still in the cluster: its last valid version stays, not deleted as missing.
  for (const r of [...(list.rejected ?? []), ...refused]) {
    await deps.pace?.();
    const { namespace = "", name } = r.object.metadata;
    present.add(keys.object(cluster, list.kind, namespace, name));
    const noted = await noteRejected(ctx, r, r.index, true);
    if (noted === "stale") summary.stale++;
    else summary.rejected.push(noted);
  }
  const handler = kindHandlers[list.kind];
  if (handler) {
    for (const e of await listAll<ObjectRecord>(
      deps.store,
      keys.objectPrefix(cluster, list.kind),
      deps.pace,
    )) {
      await deps.pace?.();
      if (present.has(e.key)) continue;
      const [ns, name] = e.key.slice(keys.objectPrefix(cluster, list.kind).length).split("/") as [
        string,
        string,
      ];
      const ref = { namespace: ns === "_" ? "" : ns, name };
      if (e.value.deleted) {
        // A tombstone the list has moved past can go: nothing older can arrive after a list.
        const c = compareResourceVersions(e.value.resourceVersion, list.resourceVersion);
        if (c !== undefined && c <= 0) {
          await deps.store.delete(e.key, { ifVersion: e.version });
          if (e.value.rejected) await clearRejected(ctx, list.kind, ref.namespace, ref.name);
        }
        continue;
      }
      // The list is older than what was recorded of the object: it may predate its creation.
      if (isNewerThanList(e.value, list.resourceVersion)) {
        summary.stale++;
        continue;
      }
      const outcome = await handler.remove(ctx, ref, e.value);
      if (outcome.kind === "applied") {
        summary.deleted = (summary.deleted ?? 0) + 1;
        listed.delete++;
      }
      if (outcome.kind === "applied" && outcome.push) pushes.add(outcome.push);
      const { rejected, ...record } = e.value;
      await deps.store.put<ObjectRecord>(e.key, {
        ...record,
        deleted: true,
        resourceVersion: list.resourceVersion,
      });
      if (rejected) await clearRejected(ctx, list.kind, ref.namespace, ref.name);
    }
  }
  summary.listed = listed;
  await noteConfigs(summary, ctx, pushes);
  await queuePush(deps, summary, pushes);
  return summary;
}

/** Whether an object was recorded at a resourceVersion newer than the list's (etcd revisions compare as integers). */
function isNewerThanList(recorded: ObjectRecord, listVersion: string): boolean {
  const c = compareResourceVersions(recorded.resourceVersion, listVersion);
  return c !== undefined && c > 0;
}
