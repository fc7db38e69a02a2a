/**
 * WorkloadEntry: each cluster's copy stored under keys.config(); as Istio's workloadEntryHandler,
 * a change rebuilds the External shards of the ServiceEntries of its namespace that select it by
 * its old or its new labels (so one relabelled out of a selector leaves), an incremental (EDS)
 * push, Full only for DNS ServiceEntries (their endpoints live in the Cluster). An UPDATE whose spec
 * and labels did not change pushes nothing.
 */
import type { PushRequest } from "../../model/index.ts";
import type { StoredWorkloadEntry } from "../../registry/istio/stored.ts";
import { workloadEntryUnsupportedFields } from "../../registry/istio/workload-entry.ts";
import type { IngestContext } from "../context.ts";
import { applyWorkloadChange, externalConfigHandler } from "./external-registry.ts";
import type { KindHandler } from "./handler.ts";

/** Applies a WorkloadEntry change (either side undefined for an add or a delete) and returns its push. */
function workloadEntryChange(
  ctx: IngestContext,
  old: StoredWorkloadEntry | undefined,
  next: StoredWorkloadEntry | undefined,
): Promise<PushRequest | undefined> {
  return applyWorkloadChange(ctx, ((next ?? old) as StoredWorkloadEntry).namespace, old, next);
}

/** WorkloadEntry ingest (see the file comment); unsupported fields noted in the summary. */
export const workloadEntryHandler: KindHandler = externalConfigHandler<StoredWorkloadEntry>(
  "WorkloadEntry",
  (ctx, we) => {
    const at = `WorkloadEntry ${we.namespace}/${we.name}`;
    for (const path of workloadEntryUnsupportedFields(we.spec as Record<string, unknown>))
      ctx.unsupported?.add(`${at}: ${path}`);
  },
  workloadEntryChange,
);
