/**
 * Recomputes one cluster's shard of one service from its slice pieces, and keeps the reverse
 * index that lets a Pod or Node event find the slices it touches. A change joins (lib/ingest/
 * endpoint-join.ts) only the pieces it touches (the changed slice; the slices naming a changed pod
 * or node); what the others contribute is taken from the stored shard. Returns the push Istio's
 * EDSUpdate would make.
 */
import {
  configKeyString,
  type Endpoint,
  mergeAll,
  type PushRequest,
  pushRequest,
  type Service,
  serviceConfigKey,
  shardKeyString,
} from "../model/index.ts";
import type { SlicePiece } from "../registry/kube/records.ts";
import { sameJson } from "../same-json.ts";
import { pushForShardUpdate, updateServiceEndpoints } from "../shards/endpoint-shards.ts";
import { readShards } from "../shards/shard-store.ts";
import { decodeSegment, keys, listAll } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { joinPieces } from "./endpoint-join.ts";
import { type RefOn, refsOf } from "./ref-index.ts";
import { reindexSlice } from "./slice-refs.ts";

/** A service by namespace and hostname. */
export interface ServiceKey {
  namespace: string;
  hostname: string;
}

/**
 * What changed for a shard: everything (the service record), some slices' raw endpoints (each
 * one's new piece, or undefined when it is gone), or the joins of some slices (a pod or node they name).
 */
export type ShardChange =
  | { kind: "all" }
  | { kind: "slices"; pieces: ReadonlyMap<string, SlicePiece | undefined> }
  | { kind: "joins"; slices: ReadonlySet<string> };

const all: ShardChange = { kind: "all" };

/**
 * Rebuilds what `change` touches and returns the push it needs (undefined: nothing for proxies).
 * `service`: the cluster's service record when the caller just wrote it (not read again);
 * `stored`: the service's pieces as storedPieces read them, when the caller has them (not listed again).
 */
export async function refreshShard(
  ctx: IngestContext,
  svc: ServiceKey,
  change: ShardChange = all,
  service?: Service,
  stored?: ReadonlyMap<string, SlicePiece>,
): Promise<PushRequest | undefined> {
  return rebuild(ctx, svc, stored ?? (await storedPieces(ctx, svc)), change, service);
}

/**
 * One slice's new raw piece (undefined: the slice is gone) for its service's shard. Unchanged
 * when the stored piece feeds the same service with the same raw endpoints (what it was joined
 * to aside); else the shard is refreshed as refreshShard does, from the same one listing.
 */
export async function refreshSlice(
  ctx: IngestContext,
  svc: ServiceKey,
  name: string,
  piece: SlicePiece | undefined,
): Promise<{ changed: boolean; push: PushRequest | undefined }> {
  const stored = await storedPieces(ctx, svc);
  if (sameRaw(stored.get(name), piece)) return { changed: false, push: undefined };
  const pieces = new Map([[name, piece]]);
  return { changed: true, push: await rebuild(ctx, svc, stored, { kind: "slices", pieces }) };
}

/**
 * Several slices' new raw pieces (undefined: gone) for one service's shard, refreshed in one
 * rebuild as refreshSlice refreshes one: those the same as stored are left out; none left, no push.
 * The push counts one trigger per slice refreshed (istiod's ReasonStats count one EDSUpdate per
 * slice event), as the per-slice refreshes' merged pushes did whenever each slice's change reached
 * proxies. `listed`: the service's pieces as storedPieces read them, when the caller has them.
 */
export async function refreshSlices(
  ctx: IngestContext,
  svc: ServiceKey,
  changes: ReadonlyMap<string, SlicePiece | undefined>,
  listed?: ReadonlyMap<string, SlicePiece>,
): Promise<PushRequest | undefined> {
  const stored = listed ?? (await storedPieces(ctx, svc));
  const pieces = new Map<string, SlicePiece | undefined>();
  for (const [name, piece] of changes) if (!sameRaw(stored.get(name), piece)) pieces.set(name, piece);
  if (pieces.size === 0) return undefined;
  const push = await rebuild(ctx, svc, stored, { kind: "slices", pieces });
  if (!push || pieces.size === 1) return push;
  const reasons: PushRequest["reasons"] = {};
  for (const [k, n] of Object.entries(push.reasons) as [keyof PushRequest["reasons"], number][])
    reasons[k] = n * pieces.size;
  return { ...push, reasons };
}

/** Same slice as stored: the service it feeds and its raw endpoints (what it was joined to aside). */
export function sameRaw(before: SlicePiece | undefined, next: SlicePiece | undefined): boolean {
  if (before === undefined || next === undefined) return before === next;
  return before.serviceName === next.serviceName && sameJson(before.endpoints, next.endpoints);
}

/** The service's stored pieces from this cluster, by slice name. */
export async function storedPieces(ctx: IngestContext, svc: ServiceKey): Promise<Map<string, SlicePiece>> {
  const prefix = keys.slicePrefix(svc.namespace, svc.hostname, ctx.cluster);
  const stored = new Map<string, SlicePiece>();
  for (const e of await listAll<SlicePiece>(ctx.store, prefix)) {
    stored.set(decodeSegment(e.key.slice(prefix.length)), e.value);
  }
  return stored;
}

async function rebuild(
  ctx: IngestContext,
  svc: ServiceKey,
  stored: ReadonlyMap<string, SlicePiece>,
  change: ShardChange,
  written?: Service,
): Promise<PushRequest | undefined> {
  const { store, cluster } = ctx;
  const { namespace, hostname } = svc;
  let pieces: ReadonlyMap<string, SlicePiece> = stored;
  if (change.kind === "slices") {
    const next = stored.size === 0 ? new Map<string, SlicePiece>() : new Map(stored);
    for (const [name, piece] of change.pieces) {
      if (piece) next.set(name, piece);
      else if (next.delete(name)) {
        await store.delete(keys.slice(namespace, hostname, cluster, name));
        await reindexSlice(ctx, svc, name, stored.get(name), undefined);
      }
    }
    pieces = next;
  }
  let stale: string[] = [];
  for (const name of pieces.keys()) if (touches(change, name)) stale.push(name);
  // What the untouched pieces contribute is already in the shard: kept, unless it cannot be told apart.
  let endpoints: Endpoint[] = [];
  if (stale.length < pieces.size) {
    const kept = await keptEndpoints(ctx, svc, stored, pieces, change);
    if (kept) endpoints = kept;
    else stale = [...pieces.keys()];
  }
  // The cluster's service record, read once: the join needs it, and so does an incremental push.
  let service: Service | undefined = written;
  let serviceRead = written !== undefined;
  const readService = async () => {
    if (!serviceRead) service = (await store.get<Service>(keys.service(namespace, hostname, cluster)))?.value;
    serviceRead = true;
    return service;
  };
  if (stale.length > 0) {
    const raws = stale.map((name) => pieces.get(name) as SlicePiece);
    const joined = await joinPieces(ctx, await readService(), raws, namespace);
    for (let i = 0; i < stale.length; i++) {
      const name = stale[i] as string;
      const raw = raws[i] as SlicePiece;
      const { built, nodes } = joined[i] as (typeof joined)[number];
      for (const e of built) endpoints.push(e);
      const piece: SlicePiece = { serviceName: raw.serviceName, endpoints: raw.endpoints, nodes };
      const before = stored.get(name);
      if (before && samePiece(before, piece)) continue;
      await store.put(keys.slice(namespace, hostname, cluster, name), piece);
      await reindexSlice(ctx, svc, name, before, piece);
    }
  }
  const pushType = await updateServiceEndpoints(store, ctx.shard, hostname, namespace, endpoints, {
    sendUnhealthy: ctx.registry.sendUnhealthy,
  });
  // Headless services: proxies route to each endpoint by address, so endpoints shape listeners too.
  if (pushType === "incremental") {
    if ((await readService())?.resolution === "Passthrough") {
      const configs = [configKeyString(serviceConfigKey(hostname, namespace))];
      return pushRequest({ full: true, configs, reason: "endpoint", start: ctx.now() });
    }
  }
  return pushForShardUpdate(pushType, hostname, namespace, ctx.now());
}

/** Whether `change` rebuilds the piece `name`. */
function touches(change: ShardChange, name: string): boolean {
  return (
    change.kind === "all" || (change.kind === "slices" ? change.pieces.has(name) : change.slices.has(name))
  );
}

function samePiece(a: SlicePiece, b: SlicePiece): boolean {
  return (
    a.serviceName === b.serviceName &&
    a.nodes !== undefined &&
    b.nodes !== undefined &&
    a.nodes.join("\n") === b.nodes.join("\n") &&
    (a.endpoints === b.endpoints || JSON.stringify(a.endpoints) === JSON.stringify(b.endpoints))
  );
}

/**
 * The endpoints the untouched pieces contribute, taken from the stored shard: every endpoint
 * whose key no touched piece (before or after) names. Undefined when that cannot be told: no
 * stored shard for this cluster (never built, dropped at zero endpoints, or its service deleted),
 * or a key named both by a touched and an untouched piece (the shard kept one of the two).
 */
async function keptEndpoints(
  ctx: IngestContext,
  svc: ServiceKey,
  stored: ReadonlyMap<string, SlicePiece>,
  pieces: ReadonlyMap<string, SlicePiece>,
  change: ShardChange,
): Promise<Endpoint[] | undefined> {
  const record = await readShards(ctx.store, svc.namespace, svc.hostname);
  const old = record?.shards[shardKeyString(ctx.shard)];
  if (!old) return undefined;
  const changed = endpointKeySet();
  for (const [name, p] of stored)
    if (touches(change, name) || !pieces.has(name)) for (const r of p.endpoints) changed.add(r);
  for (const [name, p] of pieces) if (touches(change, name)) for (const r of p.endpoints) changed.add(r);
  for (const [name, p] of pieces) {
    if (touches(change, name)) continue;
    for (const r of p.endpoints) if (changed.has(r)) return undefined;
  }
  return old.filter((e) => !changed.has(e));
}

type KeyParts = Pick<Endpoint, "address" | "port" | "servicePortName">;

/**
 * A set of endpointKeys without building them: by address, then the few (port, port name) pairs
 * of that address. keptEndpoints asks it about every endpoint of the service on every slice change.
 */
function endpointKeySet(): { add(e: KeyParts): void; has(e: KeyParts): boolean } {
  const byAddress = new Map<string, KeyParts[]>();
  const has = (e: KeyParts) => {
    const same = byAddress.get(e.address);
    if (same === undefined) return false;
    for (const k of same) if (k.port === e.port && k.servicePortName === e.servicePortName) return true;
    return false;
  };
  return {
    add(e) {
      const same = byAddress.get(e.address);
      if (same === undefined) byAddress.set(e.address, [e]);
      else if (!has(e)) same.push(e);
    },
    has,
  };
}

/** A service and the slices of it a pod or node change touches. */
export interface Dependent extends ServiceKey {
  slices: Set<string>;
}

/** Refreshes every listed shard (only the slices named) and merges the pushes they need. */
export async function refreshAll(
  ctx: IngestContext,
  services: Dependent[],
): Promise<PushRequest | undefined> {
  const pushes: PushRequest[] = [];
  for (const svc of services) {
    const push = await refreshShard(ctx, svc, { kind: "joins", slices: svc.slices });
    if (push) pushes.push(push);
  }
  return mergeAll(pushes);
}

/** The services, and their slices, that depend on a pod (by name or any of its IPs) or a node. */
export async function dependents(
  ctx: IngestContext,
  deps: { on: RefOn; id: string }[],
): Promise<Dependent[]> {
  const found = new Map<string, Dependent>();
  for (const s of await refsOf(ctx.store, ctx.cluster, deps)) {
    const k = `${s.namespace}/${s.hostname}`;
    const d =
      found.get(k) ??
      found.set(k, { namespace: s.namespace, hostname: s.hostname, slices: new Set() }).get(k);
    d?.slices.add(s.slice);
  }
  return [...found.values()].sort((a, b) =>
    `${a.namespace}/${a.hostname}` < `${b.namespace}/${b.hostname}` ? -1 : 1,
  );
}
