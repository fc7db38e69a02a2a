/**
 * The ServiceEntry registry's store side, shared by the ServiceEntry and WorkloadEntry handlers:
 * the configs of one namespace, and the External endpoint shard of one host rebuilt from them with
 * Kubernetes' shard semantics (new shard ▶ Full, changed ▶ EDS, same ▶ nothing, zero ▶ key kept).
 */
import {
  configKeyString,
  type PushRequest,
  pushRequest,
  type ShardKey,
  serviceConfigKey,
} from "../../model/index.ts";
import type { IstioKind } from "../../registry/istio/common.ts";
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
): Promise<PushRequest | undefined> {
  const shard = externalShard(ctx);
  const declaring = configs.serviceEntries.filter((se) => serviceEntryHosts(se.spec).includes(host));
  if (declaring.length === 0) {
    await deleteServiceShard(ctx.store, shard, host, namespace);
    return undefined;
  }
  const options = { trustDomain: ctx.registry.trustDomain };
  const endpoints = declaring.flatMap(
    (se) =>
      serviceEntryEndpoints(se, configs.workloadEntries, options).find((h) => h.hostname === host)
        ?.endpoints ?? [],
  );
  const pushType = await updateServiceEndpoints(ctx.store, shard, host, namespace, endpoints, {
    sendUnhealthy: ctx.registry.sendUnhealthy,
  });
  if (pushType === "incremental" && declaring.some((se) => isDnsServiceEntry(se.spec))) {
    const configsUpdated = [configKeyString(serviceConfigKey(host, namespace))];
    return pushRequest({ full: true, configs: configsUpdated, reason: "endpoint", start: ctx.now() });
  }
  return pushForShardUpdate(pushType, host, namespace, ctx.now());
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
