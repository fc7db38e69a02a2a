/**
 * Recomputes one cluster's shard of one service from its slice pieces joined with the pods and
 * nodes they run on, and keeps the reverse indexes that let a Pod or Node event find the shards
 * it touches. Returns the push Istio's EDSUpdate would make.
 */
import {
  configKeyString,
  type Endpoint,
  mergeAll,
  type PushRequest,
  pushRequest,
  type Service,
  serviceConfigKey,
} from "../model/index.ts";
import { buildEndpoint } from "../registry/kube/endpoint-builder.ts";
import type { NodeInfo, PodInfo, RawEndpoint, SlicePiece } from "../registry/kube/records.ts";
import { pushForShardUpdate, updateServiceEndpoints } from "../shards/endpoint-shards.ts";
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";
import type { IngestContext } from "./context.ts";

/** A service by namespace and hostname. */
export interface ServiceKey {
  namespace: string;
  hostname: string;
}

/** Rebuilds the shard and returns the push it needs (undefined: nothing changed for proxies). */
export async function refreshShard(ctx: IngestContext, svc: ServiceKey): Promise<PushRequest | undefined> {
  const { store, cluster } = ctx;
  const { namespace, hostname } = svc;
  const pieces = await listAll<SlicePiece>(store, keys.slicePrefix(namespace, hostname, cluster));
  const service = (await store.get<Service>(keys.service(namespace, hostname, cluster)))?.value;
  const raws = pieces.flatMap((p) => p.value.endpoints);
  const pods = await podsFor(store, cluster, raws);
  const nodeNames = new Set(raws.map((r) => r.nodeName || podOf(pods, r)?.nodeName || "").filter(Boolean));
  const nodes = await store.getMany<NodeInfo>([...nodeNames].map((n) => keys.node(cluster, n)));
  const endpoints: Endpoint[] = [];
  for (const raw of raws) {
    await ctx.pace?.();
    const pod = podOf(pods, raw);
    const nodeName = raw.nodeName || pod?.nodeName || "";
    // One object of one shape per endpoint (conditional spreads here cost more than the join).
    const built = buildEndpoint(raw, {
      service,
      pod,
      node: nodeName ? nodes.get(keys.node(cluster, nodeName))?.value : undefined,
      clusterId: cluster,
      trustDomain: ctx.registry.trustDomain,
      sendUnhealthy: ctx.registry.sendUnhealthy,
    });
    if (built.kind === "endpoint") endpoints.push(built.endpoint);
  }
  const pushType = await updateServiceEndpoints(store, ctx.shard, hostname, namespace, endpoints, {
    sendUnhealthy: ctx.registry.sendUnhealthy,
  });
  // Headless services: proxies route to each endpoint by address, so endpoints shape listeners too.
  if (pushType === "incremental" && service?.resolution === "Passthrough") {
    const configs = [configKeyString(serviceConfigKey(hostname, namespace))];
    return pushRequest({ full: true, configs, reason: "endpoint", start: ctx.now() });
  }
  return pushForShardUpdate(pushType, hostname, namespace, ctx.now());
}

/** Pods by "ns/name" for endpoints with a targetRef, and by IP for those without. */
type PodLookup = { byName: Map<string, PodInfo>; byIp: Map<string, PodInfo> };

async function podsFor(store: Store, cluster: string, raws: RawEndpoint[]): Promise<PodLookup> {
  const named = raws.flatMap((r) => (r.pod ? [keys.pod(cluster, r.pod.namespace, r.pod.name)] : []));
  const byName = new Map<string, PodInfo>();
  for (const e of (await store.getMany<PodInfo>([...new Set(named)])).values()) {
    byName.set(`${e.value.namespace}/${e.value.name}`, e.value);
  }
  const unnamed = [...new Set(raws.filter((r) => !r.pod).map((r) => r.address))];
  const owners = await store.getMany<{ namespace: string; name: string }>(
    unnamed.map((ip) => keys.podIp(cluster, ip)),
  );
  const ownerKeys = [...owners.values()].map((o) => keys.pod(cluster, o.value.namespace, o.value.name));
  const ownerPods = await store.getMany<PodInfo>(ownerKeys);
  const byIp = new Map<string, PodInfo>();
  for (const [key, o] of owners) {
    const pod = ownerPods.get(keys.pod(cluster, o.value.namespace, o.value.name))?.value;
    if (pod) byIp.set(decodeSegment(key.slice(keys.podIp(cluster, "").length)), pod);
  }
  return { byName, byIp };
}

function podOf(pods: PodLookup, raw: RawEndpoint): PodInfo | undefined {
  return raw.pod ? pods.byName.get(`${raw.pod.namespace}/${raw.pod.name}`) : pods.byIp.get(raw.address);
}

/** Refreshes every listed shard and merges the pushes they need. */
export async function refreshAll(
  ctx: IngestContext,
  services: ServiceKey[],
): Promise<PushRequest | undefined> {
  const pushes: PushRequest[] = [];
  for (const svc of services) {
    const push = await refreshShard(ctx, svc);
    if (push) pushes.push(push);
  }
  return mergeAll(pushes);
}

/** The dependency ids of a piece: pods it names, IPs of endpoints without a pod, nodes. */
function dependencies(piece: SlicePiece | undefined): { on: "pod" | "ip" | "node"; id: string }[] {
  const out = new Map<string, { on: "pod" | "ip" | "node"; id: string }>();
  for (const r of piece?.endpoints ?? []) {
    const dep = r.pod
      ? { on: "pod" as const, id: `${r.pod.namespace}/${r.pod.name}` }
      : { on: "ip" as const, id: r.address };
    out.set(`${dep.on}:${dep.id}`, dep);
    if (r.nodeName) out.set(`node:${r.nodeName}`, { on: "node", id: r.nodeName });
  }
  return [...out.values()];
}

/** Replaces a slice's reverse-index entries: those of `before` it no longer has go, new ones come. */
export async function reindexSlice(
  ctx: IngestContext,
  svc: ServiceKey,
  slice: string,
  before: SlicePiece | undefined,
  after: SlicePiece | undefined,
): Promise<void> {
  const key = (d: { on: "pod" | "ip" | "node"; id: string }) =>
    keys.ref(d.on, ctx.cluster, d.id, svc.namespace, svc.hostname, slice);
  const wanted = new Set(dependencies(after).map(key));
  for (const d of dependencies(before)) if (!wanted.has(key(d))) await ctx.store.delete(key(d));
  const had = new Set(dependencies(before).map(key));
  for (const k of wanted) if (!had.has(k)) await ctx.store.put(k, svc);
}

/** The services whose shards depend on a pod (by name or any of its IPs) or a node. */
export async function dependents(
  ctx: IngestContext,
  deps: { on: "pod" | "ip" | "node"; id: string }[],
): Promise<ServiceKey[]> {
  const found = new Map<string, ServiceKey>();
  for (const d of deps) {
    for (const e of await listAll<ServiceKey>(ctx.store, keys.refPrefix(d.on, ctx.cluster, d.id))) {
      found.set(`${e.value.namespace}/${e.value.hostname}`, e.value);
    }
  }
  return [...found.values()].sort((a, b) =>
    `${a.namespace}/${a.hostname}` < `${b.namespace}/${b.hostname}` ? -1 : 1,
  );
}
