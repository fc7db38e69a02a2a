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
import { decodeSegment, type Entry, keys, listAll, type Store } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { type RefChange, type RefOn, refsOf, updateRefs } from "./ref-index.ts";

/** Endpoints built between two awaits of the pace. */
const paceEvery = 64;

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
  const nodes = await getSome<NodeInfo>(
    store,
    [...nodeNames].map((n) => keys.node(cluster, n)),
  );
  const endpoints: Endpoint[] = [];
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i] as RawEndpoint;
    // Each endpoint is a microsecond's work: the pace is awaited once per `paceEvery`.
    if (i % paceEvery === paceEvery - 1) await ctx.pace?.();
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
  for (const e of (await getSome<PodInfo>(store, [...new Set(named)])).values()) {
    byName.set(`${e.value.namespace}/${e.value.name}`, e.value);
  }
  const unnamed = [...new Set(raws.filter((r) => !r.pod).map((r) => r.address))];
  const owners = await getSome<{ namespace: string; name: string }>(
    store,
    unnamed.map((ip) => keys.podIp(cluster, ip)),
  );
  const ownerKeys = [...owners.values()].map((o) => keys.pod(cluster, o.value.namespace, o.value.name));
  const ownerPods = await getSome<PodInfo>(store, ownerKeys);
  const byIp = new Map<string, PodInfo>();
  for (const [key, o] of owners) {
    const pod = ownerPods.get(keys.pod(cluster, o.value.namespace, o.value.name))?.value;
    if (pod) byIp.set(decodeSegment(key.slice(keys.podIp(cluster, "").length)), pod);
  }
  return { byName, byIp };
}

const nothing: ReadonlyMap<string, Entry<never>> = new Map<string, Entry<never>>();

/** store.getMany, without a call when there is nothing to ask for. */
function getSome<T>(
  store: Store,
  wanted: string[],
): Promise<ReadonlyMap<string, Entry<T>>> | ReadonlyMap<string, Entry<T>> {
  return wanted.length === 0 ? nothing : store.getMany<T>(wanted);
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

/** A piece's dependencies as "on\nid": pods it names, IPs of endpoints without a pod, nodes. */
function depsOf(piece: SlicePiece | undefined): Set<string> {
  const out = new Set<string>();
  for (const r of piece?.endpoints ?? []) {
    out.add(r.pod ? `pod\n${r.pod.namespace}/${r.pod.name}` : `ip\n${r.address}`);
    if (r.nodeName) out.add(`node\n${r.nodeName}`);
  }
  return out;
}

function change(dep: string, add: boolean): RefChange {
  const nl = dep.indexOf("\n");
  return { on: dep.slice(0, nl) as RefOn, id: dep.slice(nl + 1), add };
}

/**
 * Replaces a slice's reverse-index entries (lib/ingest/ref-index.ts): those of `before` it no
 * longer has go, new ones come; a slice whose dependencies did not change writes nothing.
 */
export async function reindexSlice(
  ctx: IngestContext,
  svc: ServiceKey,
  slice: string,
  before: SlicePiece | undefined,
  after: SlicePiece | undefined,
): Promise<void> {
  const wanted = depsOf(after);
  const had = depsOf(before);
  const changes: RefChange[] = [];
  for (const d of had) if (!wanted.has(d)) changes.push(change(d, false));
  for (const d of wanted) if (!had.has(d)) changes.push(change(d, true));
  if (changes.length === 0) return;
  await updateRefs(ctx.store, ctx.cluster, [svc.namespace, svc.hostname, slice], changes);
}

/** The services whose shards depend on a pod (by name or any of its IPs) or a node. */
export async function dependents(
  ctx: IngestContext,
  deps: { on: RefOn; id: string }[],
): Promise<ServiceKey[]> {
  const found = new Map<string, ServiceKey>();
  for (const s of await refsOf(ctx.store, ctx.cluster, deps)) found.set(`${s.namespace}/${s.hostname}`, s);
  return [...found.values()].sort((a, b) =>
    `${a.namespace}/${a.hostname}` < `${b.namespace}/${b.hostname}` ? -1 : 1,
  );
}
