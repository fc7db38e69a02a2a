/**
 * Reading and writing a service's EndpointShards as stored (shard-pieces.ts): the whole record
 * when it is small, else a head and bounded pieces. A reader reads the head, then every piece in
 * one getMany; a writer rewrites only the pieces whose endpoints changed (compare-and-set on each
 * piece it read), then the head only when which pieces exist or the service accounts changed
 * (compare-and-set), then deletes the pieces no longer used. Pieces are written before the head
 * that names them and deleted after the head that stopped naming them, so a reader with any head
 * finds what it names (an endpoint moving between pieces may be read twice, never half).
 */
import { keys } from "../store/keys.ts";
import { type Entry, listAll, type Store } from "../store/store.ts";
import {
  type EndpointShardsHead,
  type EndpointShardsPiece,
  type EndpointShardsStored,
  endpointCount,
  isPiecedHead,
  maxPieceEndpoints,
  type PieceSlot,
  placeEndpoints,
  shardFromPieces,
} from "./shard-pieces.ts";
import type { EndpointShardsRecord } from "./shards-record.ts";

/** One piece as read: undefined version when the head named it and it was not there. */
interface LoadedPiece extends PieceSlot {
  version: number | undefined;
}

/** A record as read, with what a write needs to change only what differs. */
export interface LoadedShards {
  /** The value under keys.shards(), with its version. */
  entry: Entry<EndpointShardsStored> | undefined;
  /** The whole record (assembled from its pieces when it has them). */
  record: EndpointShardsRecord | undefined;
  /** shardKeyString ─▶ its pieces as read; empty when the record is stored whole. */
  pieces: Map<string, LoadedPiece[]>;
}

/** Reads a service's record: the head, then its pieces (if any) in one getMany. */
export async function loadShards(store: Store, namespace: string, hostname: string): Promise<LoadedShards> {
  const entry = await store.get<EndpointShardsStored>(keys.shards(namespace, hostname));
  const pieces = new Map<string, LoadedPiece[]>();
  if (!entry || !isPiecedHead(entry.value))
    return { entry, record: entry?.value as EndpointShardsRecord, pieces };
  const head = entry.value;
  const read = await store.getMany<EndpointShardsPiece>(pieceKeys(head));
  for (const [shard, ids] of Object.entries(head.pieces)) {
    pieces.set(
      shard,
      ids.map((id) => {
        const e = read.get(keys.shardPiece(head.namespace, head.hostname, shard, id));
        return { id, endpoints: e?.value.endpoints ?? [], version: e?.version };
      }),
    );
  }
  return { entry, record: assemble(head, read), pieces };
}

/** A service's whole record (see loadShards); undefined when it has none. */
export async function readShards(
  store: Store,
  namespace: string,
  hostname: string,
): Promise<EndpointShardsRecord | undefined> {
  return (await loadShards(store, namespace, hostname)).record;
}

/**
 * Whole records from stored values already read (heads or whole records, same order): the pieces
 * of every head among them in one getMany. A value stored whole is returned as it is.
 */
export async function assembleShards(
  store: Store,
  values: readonly (EndpointShardsStored | undefined)[],
): Promise<(EndpointShardsRecord | undefined)[]> {
  const wanted: string[] = [];
  for (const v of values) if (v && isPiecedHead(v)) for (const k of pieceKeys(v)) wanted.push(k);
  if (wanted.length === 0) return values as (EndpointShardsRecord | undefined)[];
  const read = await store.getMany<EndpointShardsPiece>(wanted);
  return values.map((v) => (v && isPiecedHead(v) ? assemble(v, read) : v));
}

/** The keys of every piece a head names. */
export function pieceKeys(head: EndpointShardsHead): string[] {
  const out: string[] = [];
  for (const [shard, ids] of Object.entries(head.pieces))
    for (const id of ids) out.push(keys.shardPiece(head.namespace, head.hostname, shard, id));
  return out;
}

function assemble(
  head: EndpointShardsHead,
  read: ReadonlyMap<string, Entry<EndpointShardsPiece>>,
): EndpointShardsRecord {
  const shards: Record<string, ReturnType<typeof shardFromPieces>> = {};
  for (const [shard, ids] of Object.entries(head.pieces)) {
    const lists = ids.map(
      (id) => read.get(keys.shardPiece(head.namespace, head.hostname, shard, id))?.value.endpoints,
    );
    const endpoints = shardFromPieces(lists);
    if (endpoints.length > 0) shards[shard] = endpoints;
  }
  return {
    hostname: head.hostname,
    namespace: head.namespace,
    shards,
    serviceAccounts: head.serviceAccounts,
  };
}

/**
 * Stores `next` over what `loaded` read (null: the record is gone, pieces and all). Small records
 * are stored whole (their former pieces deleted); large ones in pieces placed by placeEndpoints,
 * only the shards whose endpoint list is not the one read being placed again. False when a
 * compare-and-set lost (another writer got there first): read again and retry.
 */
export async function writeShards(
  store: Store,
  loaded: LoadedShards,
  next: EndpointShardsRecord | null,
): Promise<boolean> {
  const { entry } = loaded;
  const ifVersion = entry?.version ?? 0;
  const owner = next ?? loaded.record;
  if (!owner) return true;
  const key = keys.shards(owner.namespace, owner.hostname);
  const stale: [string, number | undefined][] = [];
  if (next === null || endpointCount(next) <= maxPieceEndpoints) {
    if (next === null) {
      if (entry && !(await store.delete(key, { ifVersion }))) return false;
    } else if (!(await store.put(key, next, { ifVersion })).ok) return false;
    // Pieces no more: every one under the prefix, one a lost compare-and-set left unnamed too.
    if (loaded.pieces.size > 0) {
      const versions = new Map<string, number | undefined>();
      for (const [shard, list] of loaded.pieces)
        for (const p of list)
          versions.set(keys.shardPiece(owner.namespace, owner.hostname, shard, p.id), p.version);
      for (const e of await listAll(store, keys.shardPiecePrefix(owner.namespace, owner.hostname)))
        stale.push([e.key, versions.has(e.key) ? versions.get(e.key) : e.version]);
    }
    await deleteStale(store, stale);
    return true;
  }
  const index: Record<string, number[]> = {};
  const puts: [string, EndpointShardsPiece, number | undefined][] = [];
  const shardKeys = new Set([...Object.keys(next.shards), ...loaded.pieces.keys()]);
  for (const shard of [...shardKeys].sort()) {
    const desired = next.shards[shard] ?? [];
    const before = loaded.pieces.get(shard) ?? [];
    if (before.length > 0 && desired === loaded.record?.shards[shard]) {
      index[shard] = before.map((p) => p.id); // the list read: its pieces stay as they are
      continue;
    }
    const present = before.filter((p) => p.version !== undefined);
    const placement = placeEndpoints(present, desired);
    const versions = new Map(present.map((p) => [p.id, p.version]));
    const pieceKey = (id: number) => keys.shardPiece(next.namespace, next.hostname, shard, id);
    for (const p of placement.pieces) {
      if (placement.written.includes(p.id))
        puts.push([
          pieceKey(p.id),
          { endpoints: p.endpoints as EndpointShardsPiece["endpoints"] },
          versions.get(p.id),
        ]);
    }
    for (const id of placement.removed) stale.push([pieceKey(id), versions.get(id)]);
    if (placement.pieces.length > 0) index[shard] = placement.pieces.map((p) => p.id);
  }
  const head: EndpointShardsHead = {
    hostname: next.hostname,
    namespace: next.namespace,
    serviceAccounts: next.serviceAccounts,
    pieces: index,
  };
  // A piece new to the index may be left over from a write that lost its head's compare-and-set: it is overwritten.
  for (const [k, value, version] of puts)
    if (!(await store.put(k, value, version === undefined ? {} : { ifVersion: version })).ok) return false;
  if (!entry || !isPiecedHead(entry.value) || !sameHead(entry.value, head)) {
    if (!(await store.put(key, head, { ifVersion })).ok) return false;
  }
  await deleteStale(store, stale);
  return true;
}

async function deleteStale(store: Store, stale: readonly [string, number | undefined][]): Promise<void> {
  for (const [k, version] of stale)
    await store.delete(k, version === undefined ? {} : { ifVersion: version });
}

function sameHead(a: EndpointShardsHead, b: EndpointShardsHead): boolean {
  return sameJsonList(a.serviceAccounts, b.serviceAccounts) && sameIndex(a.pieces, b.pieces);
}

function sameIndex(a: Readonly<Record<string, number[]>>, b: Readonly<Record<string, number[]>>): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => b[k] !== undefined && sameJsonList(a[k] as number[], b[k] as number[]));
}

function sameJsonList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
