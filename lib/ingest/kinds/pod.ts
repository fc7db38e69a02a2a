/**
 * v1 Pod: labels, service account and node of the endpoints that run in it. A pod event
 * recomputes only the shards whose slices name the pod or one of its IPs; an endpoint whose pod
 * had not arrived is served once it does. A pod a ServiceEntry's workloadSelector selects is one of
 * its workloads too (external-registry.ts podSelectionChange).
 */
import { mergePushRequests, type PushRequest } from "../../model/index.ts";
import { convertPod } from "../../registry/kube/pod.ts";
import type { PodInfo } from "../../registry/kube/records.ts";
import type { KubePod } from "../../registry/kube/types.ts";
import { sameJson } from "../../same-json.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { setPodIps } from "../pod-ip-index.ts";
import { dependents, refreshAll } from "../shard-refresh.ts";
import { podSelectionChange } from "./external-registry.ts";
import type { KindHandler, ObjectRef } from "./handler.ts";

type Owner = { namespace: string; name: string };

function refreshDependents(ctx: IngestContext, pod: Owner, ips: string[]): Promise<PushRequest | undefined> {
  const deps = [
    { on: "pod" as const, id: `${pod.namespace}/${pod.name}` },
    ...ips.map((ip) => ({ on: "ip" as const, id: ip })),
  ];
  return dependents(ctx, deps).then((services) => refreshAll(ctx, services));
}

/** The pushes of the Kubernetes side and of the ServiceEntries selecting the pod, merged. */
function merged(a: PushRequest | undefined, b: PushRequest | undefined): PushRequest | undefined {
  return a && b ? mergePushRequests(a, b) : (a ?? b);
}

export const podHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const info = convertPod(obj as unknown as KubePod);
    const key = keys.pod(ctx.cluster, info.namespace, info.name);
    const before = (await ctx.store.get<PodInfo>(key))?.value;
    if (before && sameJson(before, info)) return { kind: "unchanged" };
    await ctx.store.put(key, info);
    await setPodIps(ctx.store, ctx.cluster, info, before?.ips ?? [], info.ips);
    // Kubernetes endpoints take readiness from their slice: a readiness flip alone joins nothing anew.
    const push =
      before && sameJson({ ...before, ready: info.ready }, info)
        ? undefined
        : await refreshDependents(ctx, info, [...new Set([...(before?.ips ?? []), ...info.ips])]);
    return { kind: "applied", push: merged(push, await podSelectionChange(ctx, before, info)) };
  },

  async remove(ctx, ref: ObjectRef): Promise<Outcome> {
    const key = keys.pod(ctx.cluster, ref.namespace, ref.name);
    const before = (await ctx.store.get<PodInfo>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    await setPodIps(ctx.store, ctx.cluster, ref, before.ips, []);
    const push = await refreshDependents(ctx, ref, before.ips);
    return { kind: "applied", push: merged(push, await podSelectionChange(ctx, before, undefined)) };
  },
};
