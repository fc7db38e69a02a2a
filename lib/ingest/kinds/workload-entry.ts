/**
 * WorkloadEntry: each cluster's copy stored under keys.config(); as Istio's workloadEntryHandler,
 * a change rebuilds the External shards of the ServiceEntries of its namespace that select it by
 * its old or its new labels (so one relabelled out of a selector leaves), an incremental (EDS)
 * push, Full only for DNS ServiceEntries (their endpoints live in the Cluster). An UPDATE whose spec
 * and labels did not change pushes nothing.
 */
import type { PushRequest } from "../../model/index.ts";
import { workloadEntryUnsupportedFields } from "../../registry/istio/workload-entry.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { applyWorkloadChange, configChanged, type StoredWorkloadEntry } from "./external-registry.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

/** Applies a WorkloadEntry change (either side undefined for an add or a delete) and returns its push. */
function workloadEntryChange(
  ctx: IngestContext,
  old: StoredWorkloadEntry | undefined,
  next: StoredWorkloadEntry | undefined,
): Promise<PushRequest | undefined> {
  return applyWorkloadChange(ctx, ((next ?? old) as StoredWorkloadEntry).namespace, old, next);
}

export const workloadEntryHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const next = toStored("WorkloadEntry", ctx, obj) as StoredWorkloadEntry;
    const at = `WorkloadEntry ${next.namespace}/${next.name}`;
    for (const path of workloadEntryUnsupportedFields(next.spec as Record<string, unknown>))
      ctx.unsupported?.add(`${at}: ${path}`);
    const key = keys.config("WorkloadEntry", next.namespace, next.name, ctx.cluster);
    const before = (await ctx.store.get<StoredWorkloadEntry>(key))?.value;
    if (!configChanged(before, next)) return { kind: "unchanged" };
    await ctx.store.put(key, next);
    return { kind: "applied", push: await workloadEntryChange(ctx, before, next) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const key = keys.config("WorkloadEntry", ref.namespace, ref.name, ctx.cluster);
    const before = (await ctx.store.get<StoredWorkloadEntry>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    return { kind: "applied", push: await workloadEntryChange(ctx, before, undefined) };
  },
};
