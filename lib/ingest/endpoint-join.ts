/**
 * Joins slice pieces' raw endpoints with the pods and nodes they run on and builds the model
 * Endpoints each piece contributes. The pods and nodes of every piece asked for are read in one
 * call each, so joining several pieces costs no more reads than joining one.
 */
import type { Endpoint, Service } from "../model/index.ts";
import {
  buildEndpoint,
  type EndpointBuildContext,
  NETWORK_LABEL,
} from "../registry/kube/endpoint-builder.ts";
import type { NamespaceInfo, NodeInfo, PodInfo, RawEndpoint, SlicePiece } from "../registry/kube/records.ts";
import { type Entry, keys, type Store } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { podsByIp } from "./pod-ip-index.ts";

/** Endpoints built between two awaits of the pace. */
const paceEvery = 64;

/** What one piece contributes: its endpoints, and the nodes they were joined with (sorted). */
export interface Joined {
  built: Endpoint[];
  nodes: string[];
}

/**
 * Builds the endpoints of each piece in `pieces` (same order) against the service record; the
 * pieces' `namespace` (the service's) gives endpoints its network label when their pod has none.
 */
export async function joinPieces(
  ctx: IngestContext,
  service: Service | undefined,
  pieces: readonly SlicePiece[],
  namespace: string,
): Promise<Joined[]> {
  if (pieces.length === 0) return [];
  const { store, cluster } = ctx;
  const raws = pieces.length === 1 ? (pieces[0] as SlicePiece).endpoints : pieces.flatMap((p) => p.endpoints);
  const pods = await podsFor(store, cluster, raws);
  const nodeNames = new Set<string>();
  for (const r of raws) {
    const name = r.nodeName || podOf(pods, r)?.nodeName;
    if (name) nodeNames.add(name);
  }
  // The namespace rides along with the nodes: one read for both.
  const nsKey = keys.namespace(cluster, namespace);
  const nodes = await getSome<NodeInfo | NamespaceInfo>(store, [
    nsKey,
    ...[...nodeNames].map((n) => keys.node(cluster, n)),
  ]);
  const namespaceNetwork =
    (nodes.get(nsKey)?.value as NamespaceInfo | undefined)?.labels[NETWORK_LABEL] ?? "";
  const out: Joined[] = [];
  let done = 0;
  // One context of one shape for every endpoint (buildEndpoint keeps none of it); endpoints of one
  // pod, node and zone share their locality and labels (read-only, as stored values are).
  const build: EndpointBuildContext = {
    service,
    pod: undefined,
    node: undefined,
    clusterId: cluster,
    trustDomain: ctx.registry.trustDomain,
    sendUnhealthy: ctx.registry.sendUnhealthy,
    namespaceNetwork,
    shared: new Map(),
  };
  // The node of the endpoint before, kept: a run of endpoints on one node builds its key once.
  let lastNodeName = "";
  let lastNode: NodeInfo | undefined;
  for (const piece of pieces) {
    const built: Endpoint[] = [];
    const used = new Set<string>();
    for (const raw of piece.endpoints) {
      // Each endpoint is a microsecond's work: the pace is awaited once per `paceEvery`.
      if (++done % paceEvery === 0) await ctx.pace?.();
      const pod = podOf(pods, raw);
      const nodeName = raw.nodeName || pod?.nodeName || "";
      if (nodeName) used.add(nodeName);
      if (nodeName !== lastNodeName) {
        lastNode = nodeName
          ? (nodes.get(keys.node(cluster, nodeName))?.value as NodeInfo | undefined)
          : undefined;
        lastNodeName = nodeName;
      }
      build.pod = pod;
      build.node = lastNode;
      const result = buildEndpoint(raw, build);
      if (result.kind === "endpoint") built.push(result.endpoint);
    }
    out.push({ built, nodes: used.size === 0 ? [] : [...used].sort() });
  }
  return out;
}

/** Pods by "ns/name" for endpoints with a targetRef, and by IP for those without. */
type PodLookup = { byName: Map<string, PodInfo>; byIp: Map<string, PodInfo> };

async function podsFor(store: Store, cluster: string, raws: readonly RawEndpoint[]): Promise<PodLookup> {
  const named = new Set<string>();
  // A list (repeats let be): podsByIp hashes the IPs only when their bucket holds any.
  const unnamed: string[] = [];
  for (const r of raws) {
    if (r.pod) named.add(keys.pod(cluster, r.pod.namespace, r.pod.name));
    else unnamed.push(r.address);
  }
  const byName = new Map<string, PodInfo>();
  for (const e of (await getSome<PodInfo>(store, [...named])).values()) {
    byName.set(`${e.value.namespace}/${e.value.name}`, e.value);
  }
  const byIp = new Map<string, PodInfo>();
  if (unnamed.length === 0) return { byName, byIp };
  // One read per IP bucket (a slice's addresses usually share one), not one per endpoint.
  const owners = await podsByIp(store, cluster, unnamed);
  if (owners.size === 0) return { byName, byIp };
  const ownerKeys = [...owners.values()].map((o) => keys.pod(cluster, o.namespace, o.name));
  const ownerPods = await getSome<PodInfo>(store, ownerKeys);
  for (const [ip, o] of owners) {
    const pod = ownerPods.get(keys.pod(cluster, o.namespace, o.name))?.value;
    if (pod) byIp.set(ip, pod);
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
