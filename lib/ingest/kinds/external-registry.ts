/**
 * The ServiceEntry registry's store side, shared by the ServiceEntry and WorkloadEntry handlers:
 * the configs of one namespace, and the External endpoint shard of one host rebuilt from them with
 * Kubernetes' shard semantics (new shard ▶ Full, changed ▶ EDS, same ▶ nothing, zero ▶ key kept).
 */
import {
  configKeyString,
  type Endpoint,
  endpointKey,
  type PushRequest,
  pushRequest,
  type ShardKey,
  serviceConfigKey,
  shardKeyString,
} from "../../model/index.ts";
import { type IstioKind, selectorLabels } from "../../registry/istio/common.ts";
import {
  isDnsServiceEntry,
  type ServiceEntryConfig,
  type ServiceEntrySpec,
  serviceEntryEndpoints,
  serviceEntryHosts,
} from "../../registry/istio/service-entry.ts";
import type { WorkloadEntryConfig, WorkloadEntrySpec } from "../../registry/istio/workload-entry.ts";
import {
  deleteServiceShard,
  pushForShardUpdate,
  updateServiceEndpoints,
} from "../../shards/endpoint-shards.ts";
import { keys, listAll } from "../../store/index.ts";
import type { EndpointShardsRecord } from "../../xds/types.ts";
import type { IngestContext } from "../context.ts";
import { sameJson } from "./handler.ts";
import type { StoredConfig } from "./istio-config.ts";

/** A ServiceEntry as stored. */
export type StoredServiceEntry = StoredConfig<"ServiceEntry", ServiceEntrySpec>;
/** A WorkloadEntry as stored. */
export type StoredWorkloadEntry = StoredConfig<"WorkloadEntry", WorkloadEntrySpec>;

/** The ServiceEntries and WorkloadEntries of one namespace and the call's cluster, in key order. */
export interface NamespaceConfigs {
  serviceEntries: ServiceEntryConfig[];
  workloadEntries: WorkloadEntryConfig[];
}

/** The call's External shard: ServiceEntry endpoints of this cluster's copy of the configs. */
export function externalShard(ctx: IngestContext): ShardKey {
  return { provider: "External", cluster: ctx.cluster };
}

/**
 * Lists the namespace's ServiceEntries and WorkloadEntries of the call's cluster (a WorkloadEntry
 * only joins ServiceEntries of its own namespace, as Istio; one list per kind).
 */
export async function namespaceConfigs(ctx: IngestContext, namespace: string): Promise<NamespaceConfigs> {
  const read = async <T extends { clusterId: string }>(kind: string) =>
    (await listAll<T>(ctx.store, keys.configsIn(kind, namespace)))
      .map((e) => e.value)
      .filter((c) => c.clusterId === ctx.cluster);
  return {
    serviceEntries: await read<StoredServiceEntry>("ServiceEntry"),
    workloadEntries: await read<StoredWorkloadEntry>("WorkloadEntry"),
  };
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
  const options = { trustDomain: ctx.registry.trustDomain };
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
  const record = (await ctx.store.get<EndpointShardsRecord>(keys.shards(namespace, host)))?.value;
  const current = record?.shards[shardKeyString(externalShard(ctx))];
  if (!current) return undefined;
  const options = { trustDomain: ctx.registry.trustDomain };
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
