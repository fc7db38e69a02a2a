/**
 * Applies validated watch events to the store, in order, and queues the one push they need.
 * Mutations return the push they need (Istio's edsUpdate); the batch's pushes are merged
 * into one queued PushRequest.
 */
import {
  configKeyString,
  type Endpoint,
  mergeAll,
  type PushRequest,
  pushRequest,
  type Service,
  type ShardKey,
  serviceConfigKey,
  serviceHostname,
} from "../model/index.ts";
import { enqueuePush } from "../push/queue.ts";
import { convertEndpointSlice } from "../registry/kube/endpoint-slice.ts";
import { convertService, serviceNameOfSlice } from "../registry/kube/service.ts";
import type { EndpointSlice, KubeService } from "../registry/kube/types.ts";
import {
  deleteServiceShard,
  pushForShardUpdate,
  type SlicePiece,
  shardEndpointsFromSlices,
  updateServiceEndpoints,
} from "../shards/endpoint-shards.ts";
import { keys, type Store } from "../store/index.ts";
import type { KubeObject, WatchEvent } from "./events.ts";

export interface ApplyDeps {
  store: Store;
  domainSuffix: string;
  now: () => number;
}

/** What a batch did, returned to the caller as the ingest answer. */
export interface ApplySummary {
  cluster: string;
  events: number;
  applied: number;
  unchanged: number;
  /** Events of kinds this build does not convert yet, by kind. */
  ignored: Record<string, number>;
  bookmarks: number;
  /** The push queued for this batch, if any. */
  push: { full: boolean; configs: number | "all" } | null;
}

type Outcome =
  | { kind: "applied"; push: PushRequest | undefined }
  | { kind: "unchanged" }
  | { kind: "ignored" };

/** Applies every event for `cluster`, then queues one merged push. */
export async function applyEvents(
  deps: ApplyDeps,
  cluster: string,
  events: readonly WatchEvent[],
): Promise<ApplySummary> {
  const summary: ApplySummary = {
    cluster,
    events: events.length,
    applied: 0,
    unchanged: 0,
    ignored: {},
    bookmarks: 0,
    push: null,
  };
  const pushes: PushRequest[] = [];
  const shard: ShardKey = { provider: "Kubernetes", cluster };
  for (const event of events) {
    if (event.type === "BOOKMARK") {
      summary.bookmarks++;
      continue;
    }
    const outcome = await applyObject(deps, shard, event.type === "DELETED", event.object);
    if (outcome.kind === "ignored") {
      summary.ignored[event.object.kind] = (summary.ignored[event.object.kind] ?? 0) + 1;
    } else if (outcome.kind === "unchanged") {
      summary.unchanged++;
    } else {
      summary.applied++;
      if (outcome.push) pushes.push(outcome.push);
    }
  }
  const merged = mergeAll(pushes);
  if (merged) {
    await enqueuePush(deps.store, merged, deps.now());
    summary.push = { full: merged.full, configs: merged.configsUpdated?.length ?? "all" };
  }
  return summary;
}

function applyObject(deps: ApplyDeps, shard: ShardKey, deleted: boolean, obj: KubeObject): Promise<Outcome> {
  switch (obj.kind) {
    case "Service":
      return applyService(deps, shard, deleted, obj as unknown as KubeService);
    case "EndpointSlice":
      return applyEndpointSlice(deps, shard, deleted, obj as unknown as EndpointSlice);
    default:
      return Promise.resolve({ kind: "ignored" });
  }
}

async function applyService(
  deps: ApplyDeps,
  shard: ShardKey,
  deleted: boolean,
  obj: KubeService,
): Promise<Outcome> {
  const service = convertService(obj, { clusterId: shard.cluster, domainSuffix: deps.domainSuffix });
  const key = keys.service(service.namespace, service.hostname, shard.cluster);
  const current = await deps.store.get<Service>(key);
  if (deleted) {
    if (!current) return { kind: "unchanged" };
    await deps.store.delete(key);
    await deleteServiceShard(deps.store, shard, service.hostname, service.namespace);
  } else {
    if (current && sameJson(current.value, service)) return { kind: "unchanged" };
    await deps.store.put(key, service);
    // Slices may have arrived first, or outlived a delete and re-create: serve what they hold.
    const endpoints = await shardEndpointsFromSlices(
      deps.store,
      service.namespace,
      service.hostname,
      shard.cluster,
    );
    if (endpoints.length > 0) {
      await updateServiceEndpoints(deps.store, shard, service.hostname, service.namespace, endpoints);
    }
  }
  const configs = [configKeyString(serviceConfigKey(service.hostname, service.namespace))];
  return {
    kind: "applied",
    push: pushRequest({ full: true, configs, reason: "service", start: deps.now() }),
  };
}

async function applyEndpointSlice(
  deps: ApplyDeps,
  shard: ShardKey,
  deleted: boolean,
  obj: EndpointSlice,
): Promise<Outcome> {
  const serviceName = serviceNameOfSlice(obj);
  if (serviceName === undefined) return { kind: "ignored" };
  const namespace = obj.metadata.namespace as string;
  const hostname = serviceHostname(serviceName, namespace, deps.domainSuffix);
  const key = keys.slice(namespace, hostname, shard.cluster, obj.metadata.name);
  if (deleted) {
    if (!(await deps.store.delete(key))) return { kind: "unchanged" };
  } else {
    const endpoints: Endpoint[] = convertEndpointSlice(obj, { clusterId: shard.cluster });
    const current = await deps.store.get<SlicePiece>(key);
    if (current && sameJson(current.value.endpoints, endpoints)) return { kind: "unchanged" };
    await deps.store.put<SlicePiece>(key, { endpoints });
  }
  const endpoints = await shardEndpointsFromSlices(deps.store, namespace, hostname, shard.cluster);
  const pushType = await updateServiceEndpoints(deps.store, shard, hostname, namespace, endpoints);
  return { kind: "applied", push: pushForShardUpdate(pushType, hostname, namespace, deps.now()) };
}

/** Structural equality for plain data built in a fixed field order (converters guarantee it). */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
