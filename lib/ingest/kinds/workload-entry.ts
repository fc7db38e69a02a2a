/**
 * WorkloadEntry: each cluster's copy stored under keys.config(); as Istio's workloadEntryHandler,
 * a change rebuilds the External shards of the ServiceEntries of its namespace that select it by
 * its old or its new labels (so one relabelled out of a selector leaves), an incremental (EDS)
 * push, Full only for DNS ServiceEntries (their endpoints live in the Cluster). An UPDATE whose spec
 * and labels did not change pushes nothing.
 */
import { configKeyString, mergeAll, type PushRequest, pushRequest } from "../../model/index.ts";
import { workloadEntryPushScope } from "../../registry/istio/push-scope.ts";
import { workloadEntryUnsupportedFields } from "../../registry/istio/workload-entry.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import {
  configChanged,
  namespaceConfigs,
  refreshExternalShard,
  type StoredWorkloadEntry,
} from "./external-registry.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

/** Applies a WorkloadEntry change (either side undefined for an add or a delete) and returns its push. */
async function workloadEntryChange(
  ctx: IngestContext,
  old: StoredWorkloadEntry | undefined,
  next: StoredWorkloadEntry | undefined,
): Promise<PushRequest | undefined> {
  const namespace = ((next ?? old) as StoredWorkloadEntry).namespace;
  // Read after the write: the namespace's WorkloadEntries already hold the change.
  const configs = await namespaceConfigs(ctx, namespace);
  const scope = workloadEntryPushScope(old, next, configs.serviceEntries);
  const pushes: PushRequest[] = [];
  for (const host of new Set(scope.endpointHosts.map((h) => h.hostname))) {
    const push = await refreshExternalShard(ctx, namespace, host, configs, { old, next });
    if (push) pushes.push(push);
  }
  if (scope.full)
    pushes.push(
      pushRequest({
        full: true,
        configs: scope.configsUpdated.map(configKeyString),
        // Istio's workloadEntryHandler pushes a DNS ServiceEntry's hosts with reason EndpointUpdate.
        reason: "endpoint",
        start: ctx.now(),
      }),
    );
  return mergeAll(pushes);
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
