/**
 * Objects the cluster holds but edgepilot refuses (their kind's rules, as istiod's validation or the
 * API server's): skipped, never a reason to refuse the rest of their batch or list. As istiod keeps
 * serving the last good config, the last valid version of such an object stays served; what was
 * refused is kept beside its version record (ObjectRecord.rejected) so each refused version is
 * logged and counted once, and indexed under keys.rejected() for /debug/configz until a valid
 * version or the object's deletion arrives.
 */
import { keys } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import type { RejectedEvent } from "./events.ts";
import { isNewer, type ObjectRecord } from "./objects.ts";

/** One refused object as an ingest answer lists it. */
export interface Rejection {
  /** Its index in the batch (or in the resync list's items). */
  index: number;
  kind: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  /** The path inside the object, e.g. `spec.http[0].route`. */
  field: string;
  message: string;
  /** This version was refused before (logged and counted then); absent the first time. */
  repeated?: true;
}

/** What keys.rejected() holds: the refused version and why, its cluster, and when it was first refused (ms, the core's clock). */
export type RejectedRecord = Omit<Rejection, "index" | "repeated"> & { cluster: string; at: number };

/**
 * Notes a refused object: with version tracking (watch events and resyncs) in its version record
 * and the index, so a later, older event of it is stale and the same version is reported as
 * `repeated`; without (admission) it is only reported. Returns "stale" for an event older than what
 * is recorded. The object's served state is not touched.
 */
export async function noteRejected(
  ctx: IngestContext,
  event: RejectedEvent,
  index: number,
  trackVersions: boolean,
): Promise<Rejection | "stale"> {
  const { kind, metadata } = event.object;
  const namespace = metadata.namespace ?? "";
  const resourceVersion = metadata.resourceVersion ?? "";
  const rejection: Rejection = {
    index,
    kind,
    namespace,
    name: metadata.name,
    resourceVersion,
    field: event.field,
    message: event.message,
  };
  if (!trackVersions) return rejection;
  const key = keys.object(ctx.cluster, kind, namespace, metadata.name);
  const recorded = (await ctx.store.get<ObjectRecord>(key))?.value;
  if (recorded?.rejected && recorded.resourceVersion === resourceVersion && resourceVersion !== "")
    return { ...rejection, repeated: true };
  if (recorded && !isNewer(recorded, resourceVersion)) return "stale";
  // Never valid before: a tombstone, so nothing is undone for it and a resync past it drops it.
  const record: ObjectRecord = {
    ...(recorded ?? { uid: metadata.uid ?? "", deleted: true }),
    resourceVersion,
    rejected: { field: event.field, message: event.message },
  };
  await ctx.store.put(key, record);
  const { index: _, ...refused } = rejection;
  const indexed: RejectedRecord = { cluster: ctx.cluster, ...refused, at: ctx.now() };
  await ctx.store.put(keys.rejected(ctx.cluster, kind, namespace, metadata.name), indexed);
  return rejection;
}

/** Drops an object's index entry once a valid version or its deletion replaced the refused one. */
export async function clearRejected(
  ctx: Pick<IngestContext, "store" | "cluster">,
  kind: string,
  namespace: string,
  name: string,
): Promise<void> {
  await ctx.store.delete(keys.rejected(ctx.cluster, kind, namespace, name));
}
