/**
 * The ServiceEntry registry's store side, shared by the ServiceEntry, WorkloadEntry and Pod handlers:
 * the configs of one namespace, and the External endpoint shard of one host rebuilt from them with
 * Kubernetes' shard semantics (new shard ▶ Full, changed ▶ EDS, same ▶ nothing, zero ▶ key kept).
 */

import {
  configKeyString,
  type Endpoint,
  endpointKey,
  mergeAll,
  type PushRequest,
  pushRequest,
  type ShardKey,
  serviceConfigKey,
  shardKeyString,
} from "../../model/index.ts";
import { type IstioKind, selectorLabels } from "../../registry/istio/common.ts";
import { workloadEntryPushScope } from "../../registry/istio/push-scope.ts";
import {
  isDnsServiceEntry,
  type ServiceEntryConfig,
  selectsWorkloadEntry,
  serviceEntryEndpoints,
  serviceEntryHosts,
} from "../../registry/istio/service-entry.ts";
import type { StoredConfig, StoredServiceEntry, StoredWorkloadEntry } from "../../registry/istio/stored.ts";
import type { WorkloadEntryConfig } from "../../registry/istio/workload-entry.ts";
import type { NodeInfo, PodInfo } from "../../registry/kube/records.ts";
import { sameJson } from "../../same-json.ts";
import {
  deleteServiceShard,
  pushForShardUpdate,
  updateServiceEndpoints,
} from "../../shards/endpoint-shards.ts";
import { readShards } from "../../shards/shard-store.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { ingestMesh } from "../mesh.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";
import { namespacePodWorkloads, podWorkload } from "./pod-workloads.ts";

/** The ServiceEntries and workloads of one namespace and the call's cluster, in key order. */
export interface NamespaceConfigs {
  serviceEntries: ServiceEntryConfig[];
  /** The WorkloadEntries, then (when an entry selects workloads) the Pods as workloads (pod-workloads.ts). */
  workloadEntries: WorkloadEntryConfig[];
}

/** The call's External shard: ServiceEntry endpoints of this cluster's copy of the configs. */
export function externalShard(ctx: IngestContext): ShardKey {
  return { provider: "External", cluster: ctx.cluster };
}

/**
 * Lists the namespace's ServiceEntries, WorkloadEntries and (when an entry has a workloadSelector)
 * Pods of the call's cluster: a workload only joins ServiceEntries of its own namespace, as Istio.
 */
export async function namespaceConfigs(ctx: IngestContext, namespace: string): Promise<NamespaceConfigs> {
  const read = async <T extends { clusterId: string }>(kind: string) =>
    (await listAll<T>(ctx.store, keys.configsIn(kind, namespace)))
      .map((e) => e.value)
      .filter((c) => c.clusterId === ctx.cluster);
  const serviceEntries = await read<StoredServiceEntry>("ServiceEntry");
  const workloadEntries: WorkloadEntryConfig[] = await read<StoredWorkloadEntry>("WorkloadEntry");
  // Pods are listed only when some entry selects workloads at all.
  if (serviceEntries.some((se) => selectorLabels(se.spec.workloadSelector) !== undefined))
    workloadEntries.push(...(await namespacePodWorkloads(ctx, namespace)));
  return { serviceEntries, workloadEntries };
}

/** Per ingest call (its context), the namespaces' ServiceEntries that select workloads. */
const selectingCache = new WeakMap<IngestContext, Map<string, Promise<ServiceEntryConfig[]>>>();

/**
 * The namespace's ServiceEntries with a workloadSelector (call's cluster), listed once per ingest
 * call and namespace, so a batch of Pods lists them once; a ServiceEntry change forgets them
 * (forgetSelectingEntries).
 */
export function selectingEntries(ctx: IngestContext, namespace: string): Promise<ServiceEntryConfig[]> {
  let byNs = selectingCache.get(ctx);
  if (!byNs) {
    byNs = new Map();
    selectingCache.set(ctx, byNs);
  }
  let found = byNs.get(namespace);
  if (!found) {
    found = listAll<StoredServiceEntry>(ctx.store, keys.configsIn("ServiceEntry", namespace)).then((l) =>
      l
        .map((e) => e.value)
        .filter((c) => c.clusterId === ctx.cluster && selectorLabels(c.spec.workloadSelector) !== undefined),
    );
    byNs.set(namespace, found);
  }
  return found;
}

/** Forgets what selectingEntries listed for the namespace (a ServiceEntry of it changed). */
export function forgetSelectingEntries(ctx: IngestContext, namespace: string): void {
  selectingCache.get(ctx)?.delete(namespace);
}

/**
 * Applies one workload's change (a WorkloadEntry, or a Pod as a workload; either side undefined
 * for an add or a delete) as Istio's workloadEntryHandler: the External shards of the namespace's
 * ServiceEntries selecting it by its old or new labels are updated (one relabelled out leaves), an
 * EDS push, Full (reason `endpoint`) naming the hosts of DNS entries among them.
 */
export async function applyWorkloadChange(
  ctx: IngestContext,
  namespace: string,
  old: WorkloadEntryConfig | undefined,
  next: WorkloadEntryConfig | undefined,
): Promise<PushRequest | undefined> {
  // Read after the write: the namespace's workloads already hold the change.
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
        reason: "endpoint",
        start: ctx.now(),
      }),
    );
  return mergeAll(pushes);
}

/**
 * Rebuilds the External shard of `host` from every ServiceEntry of the namespace declaring it
 * (their endpoints joined, as Istio's serviceentry controller keys instances by host and
 * namespace) and returns the push Istio's EDSUpdate would make; a DNS ServiceEntry's endpoints live
 * in its Cluster, so a change to them is Full. No ServiceEntry declares the host any more ▶ the
 * shard goes (the service's removal is the caller's Full push).
 */
export async function refreshExternalShard(
  ctx: IngestContext,
  namespace: string,
  host: string,
  configs: NamespaceConfigs,
  workload?: WorkloadChange,
): Promise<PushRequest | undefined> {
  const shard = externalShard(ctx);
  const declaring = configs.serviceEntries.filter((se) => serviceEntryHosts(se.spec).includes(host));
  if (declaring.length === 0) {
    await deleteServiceShard(ctx.store, shard, host, namespace);
    return undefined;
  }
  const options = { trustDomain: (await ingestMesh(ctx)).trustDomain };
  const endpoints =
    (workload && (await workloadDelta(ctx, namespace, host, declaring, configs, workload))) ??
    declaring.flatMap((se) => hostEndpoints(se, configs.workloadEntries, host, options));
  const pushType = await updateServiceEndpoints(ctx.store, shard, host, namespace, endpoints, {
    sendUnhealthy: ctx.registry.sendUnhealthy,
  });
  if (pushType === "incremental" && declaring.some((se) => isDnsServiceEntry(se.spec))) {
    const configsUpdated = [configKeyString(serviceConfigKey(host, namespace))];
    return pushRequest({ full: true, configs: configsUpdated, reason: "endpoint", start: ctx.now() });
  }
  return pushForShardUpdate(pushType, host, namespace, ctx.now());
}

/** One WorkloadEntry's change: its old and new config (undefined for an add or a delete). */
export interface WorkloadChange {
  old: WorkloadEntryConfig | undefined;
  next: WorkloadEntryConfig | undefined;
}

function hostEndpoints(
  se: ServiceEntryConfig,
  workloads: readonly WorkloadEntryConfig[],
  host: string,
  options: { trustDomain: string },
): Endpoint[] {
  return serviceEntryEndpoints(se, workloads, options).find((h) => h.hostname === host)?.endpoints ?? [];
}

/**
 * The host's External endpoints after one WorkloadEntry changed, from the stored shard: what the
 * old entry contributed out, what the new one contributes in, so a namespace of many workloads is
 * not rebuilt per event. Undefined (rebuild it all) when there is no stored shard, or when another
 * source (another WorkloadEntry, an inline endpoint) shares an address with the entry: the shard
 * keeps one endpoint per address and port, and which one could not be told apart here.
 */
async function workloadDelta(
  ctx: IngestContext,
  namespace: string,
  host: string,
  declaring: readonly ServiceEntryConfig[],
  configs: NamespaceConfigs,
  { old, next }: WorkloadChange,
): Promise<Endpoint[] | undefined> {
  const record = await readShards(ctx.store, namespace, host);
  const current = record?.shards[shardKeyString(externalShard(ctx))];
  if (!current) return undefined;
  const options = { trustDomain: (await ingestMesh(ctx)).trustDomain };
  const selecting = declaring.filter((se) => selectorLabels(se.spec.workloadSelector) !== undefined);
  const contributed = (we: WorkloadEntryConfig | undefined) =>
    we ? selecting.flatMap((se) => hostEndpoints(se, [we], host, options)) : [];
  const out = contributed(old);
  const into = contributed(next);
  const addresses = new Set([...out, ...into].map((e) => e.address));
  if (addresses.size === 0) return current;
  const name = (old ?? next)?.name;
  for (const we of configs.workloadEntries)
    if (we.name !== name && addresses.has(we.spec.address ?? "")) return undefined;
  for (const se of declaring)
    if (
      selecting.includes(se)
        ? false
        : hostEndpoints(se, [], host, options).some((e) => addresses.has(e.address))
    )
      return undefined;
  const gone = new Set(out.map(endpointKey));
  return [...current.filter((e) => !gone.has(endpointKey(e))), ...into];
}

/** Whether a stored config changed in what the registry reads: spec, labels or age (needsPush). */
export function configChanged(
  before: StoredConfig<IstioKind> | undefined,
  next: StoredConfig<IstioKind>,
): boolean {
  return (
    !before ||
    !sameJson(before.spec, next.spec) ||
    !sameJson(before.labels, next.labels) ||
    before.creationTimestamp !== next.creationTimestamp
  );
}

/**
 * A Pod changed (either side undefined for an add or a delete): when the namespace has entries
 * selecting workloads and what they see of the Pod (IP, labels, service account, locality, whether
 * it serves) changed, it is applied as a workload change. Nothing is listed for a namespace without
 * such entries beyond one cached list per ingest call.
 */
export async function podSelectionChange(
  ctx: IngestContext,
  old: PodInfo | undefined,
  next: PodInfo | undefined,
): Promise<PushRequest | undefined> {
  const namespace = ((next ?? old) as PodInfo).namespace;
  const entries = await selectingEntries(ctx, namespace);
  if (entries.length === 0) return undefined;
  const nodes = new Map<string, Promise<NodeInfo | undefined>>();
  const before = old && (await podWorkload(ctx, old, nodes));
  const after = next && (await podWorkload(ctx, next, nodes));
  if (sameJson(before, after)) return undefined;
  // A Pod no entry selects, before or after, changes no shard: nothing more is read.
  const selected = (w: WorkloadEntryConfig | undefined) =>
    w !== undefined && entries.some((se) => selectsWorkloadEntry(se, w));
  if (!selected(before) && !selected(after)) return undefined;
  return applyWorkloadChange(ctx, namespace, before, after);
}

/**
 * The ingest handler of a ServiceEntry or WorkloadEntry: each cluster's copy stored under
 * keys.config(); an UPDATE configChanged() finds unchanged pushes nothing (needsPush); otherwise
 * `change` applies it (either side undefined for an add or a delete) and returns its push.
 */
export function externalConfigHandler<C extends StoredServiceEntry | StoredWorkloadEntry>(
  kind: C["kind"],
  noteUnsupported: (ctx: IngestContext, c: C) => void,
  change: (ctx: IngestContext, old: C | undefined, next: C | undefined) => Promise<PushRequest | undefined>,
): KindHandler {
  return {
    async apply(ctx, obj): Promise<Outcome> {
      const next = toStored(kind, ctx, obj) as C;
      noteUnsupported(ctx, next);
      const key = keys.config(kind, next.namespace, next.name, ctx.cluster);
      const before = (await ctx.store.get<C>(key))?.value;
      if (!configChanged(before, next)) return { kind: "unchanged" };
      await ctx.store.put(key, next);
      return { kind: "applied", push: await change(ctx, before, next) };
    },
    async remove(ctx, ref): Promise<Outcome> {
      const key = keys.config(kind, ref.namespace, ref.name, ctx.cluster);
      const before = (await ctx.store.get<C>(key))?.value;
      if (!before) return { kind: "unchanged" };
      await ctx.store.delete(key);
      return { kind: "applied", push: await change(ctx, before, undefined) };
    },
  };
}
