/**
 * A service's EndpointShards in bounded pieces, placed the way Kubernetes' EndpointSlice
 * controller places endpoints in slices (pkg/controller/endpointslice reconciler,
 * reconcileByAddressType): an endpoint changed is updated in the piece that holds it, one gone is
 * removed from it, a piece left empty is deleted, and new endpoints first fill the pieces that are
 * rewritten anyway (fullest first), then, when fewer than a piece's worth are left, the unchanged
 * piece closest to full that takes them all, and only then new pieces. So one endpoint changed
 * rewrites one piece, and what a store writes per change does not grow with the service. Pure.
 *
 * A record of at most maxPieceEndpoints endpoints in all is stored whole, as it always was (the
 * head is then its only item: the common small service costs one read and one write, and stores an
 * older version wrote read as they are); a larger one is a head (service, service accounts, which
 * pieces each shard has) plus pieces under keys.shardPiece.
 */
import type { Endpoint } from "../model/index.ts";
import { endpointEquals } from "../model/index.ts";
import { compareEndpoints } from "./endpoint-order.ts";
import type { EndpointShardsRecord } from "./shards-record.ts";

/**
 * At most this many endpoints per piece, and in a record stored whole: Kubernetes' default
 * maxEndpointsPerSlice. A joined endpoint with a Deployment pod's usual labels (Istio's and the
 * topology ones included) encodes to about 0.7 KB of JSON (test/unit/shards/shard-pieces.test.ts
 * measures one), so a full piece is about 67 KB: a DynamoDB item (400 KB) with 6x room for pods
 * with more labels, under a Durable Object value (128 KiB), and a rewrite costs ~67 write units
 * instead of the megabytes of a 5,000-endpoint record. Smaller pieces would make writes cheaper
 * still but reads longer: 5,000 endpoints are 50 pieces, one BatchGetItem (at most 100 keys).
 */
export const maxPieceEndpoints = 100;

/** The value under keys.shards(): the whole record (small services) or the head of its pieces. */
export type EndpointShardsStored = EndpointShardsRecord | EndpointShardsHead;

/** The head of a record kept in pieces: everything but the endpoints, and where they are. */
export interface EndpointShardsHead {
  hostname: string;
  namespace: string;
  /** Sorted, unique service accounts of all endpoints in all shards (as EndpointShardsRecord's). */
  serviceAccounts: string[];
  /** shardKeyString ─▶ the ids of its pieces, ascending; shard keys sorted. A shard with none is absent. */
  pieces: Record<string, number[]>;
}

/** The value under keys.shardPiece(): some endpoints of one shard, in canonical order. */
export interface EndpointShardsPiece {
  endpoints: Endpoint[];
}

/** Whether a stored value is a head of pieces (else it is the whole record). */
export function isPiecedHead(v: EndpointShardsStored): v is EndpointShardsHead {
  return (v as Partial<EndpointShardsHead>).pieces !== undefined;
}

/** One piece as placement sees it. */
export interface PieceSlot {
  id: number;
  endpoints: readonly Endpoint[];
}

/** Where one shard's endpoints go: the pieces after, which of them to write, which to delete. */
export interface Placement {
  /** Every piece of the shard after the change, ascending id, none empty. */
  pieces: PieceSlot[];
  /** Ids of pieces whose content is new or changed (each in canonical order). */
  written: number[];
  /** Ids of pieces no longer used. */
  removed: number[];
}

/**
 * Places a shard's desired endpoints (unique by endpointKey) into pieces of at most `max`, from the
 * pieces it has now, with the EndpointSlice controller's rules (see the file comment). A piece id
 * freed in this change is reused before a new one is taken, so a piece emptied and one created
 * become one rewrite. Deterministic: new endpoints are placed in canonical order.
 */
export function placeEndpoints(
  current: readonly PieceSlot[],
  desired: readonly Endpoint[],
  max: number = maxPieceEndpoints,
): Placement {
  // Every stored endpoint with its piece, in canonical order (one key twice: piece order), walked beside `desired`.
  const held: { e: Endpoint; id: number }[] = [];
  for (const slot of current) for (const e of slot.endpoints) held.push({ e, id: slot.id });
  held.sort((a, b) => compareEndpoints(a.e, b.e));
  // What becomes of a stored endpoint, by piece: replaced by the desired one, or dropped (null). Kept: absent.
  const fate = new Map<number, Map<Endpoint, Endpoint | null>>();
  const note = (id: number, e: Endpoint, to: Endpoint | null) => {
    const m = fate.get(id);
    if (m) m.set(e, to);
    else fate.set(id, new Map([[e, to]]));
  };
  const rest: Endpoint[] = [];
  let i = 0;
  for (const d of desired) {
    while (i < held.length && compareEndpoints((held[i] as (typeof held)[number]).e, d) < 0) {
      const gone = held[i++] as (typeof held)[number];
      note(gone.id, gone.e, null);
    }
    const h = held[i];
    if (h === undefined || compareEndpoints(h.e, d) !== 0) {
      rest.push(d); // new
      continue;
    }
    if (h.e !== d && !endpointEquals(h.e, d)) note(h.id, h.e, d);
    // A second stored copy of one key (a torn write) is dropped.
    for (i++; i < held.length && compareEndpoints((held[i] as (typeof held)[number]).e, d) === 0; i++)
      note((held[i] as (typeof held)[number]).id, (held[i] as (typeof held)[number]).e, null);
  }
  for (; i < held.length; i++)
    note((held[i] as (typeof held)[number]).id, (held[i] as (typeof held)[number]).e, null);

  const next = new Map<number, Endpoint[]>();
  const updated: number[] = [];
  const unchanged: number[] = [];
  const freed: number[] = [];
  // 1. Every piece keeps what is still wanted (updated in place) and drops the rest.
  for (const slot of current) {
    const f = fate.get(slot.id);
    if (f === undefined) {
      next.set(slot.id, slot.endpoints as Endpoint[]); // copied before it is filled
      unchanged.push(slot.id);
      continue;
    }
    const kept: Endpoint[] = [];
    for (const e of slot.endpoints) {
      const to = f.get(e);
      if (to === undefined) kept.push(e);
      else if (to !== null) kept.push(to);
    }
    if (kept.length === 0) freed.push(slot.id);
    else {
      next.set(slot.id, kept);
      updated.push(slot.id);
    }
  }
  let at = 0;
  // 2. New endpoints fill the pieces rewritten anyway, the fullest first.
  const fill = (id: number) => {
    const list = next.get(id) as Endpoint[];
    while (at < rest.length && list.length < max) list.push(rest[at++] as Endpoint);
  };
  for (const id of bySize(updated, next)) fill(id);
  // 3. Then fewer than a piece's worth go into the unchanged piece closest to full that takes them all; else new pieces.
  const used = new Set([...current.map((s) => s.id)]);
  let fresh = 0;
  const created: number[] = [];
  while (at < rest.length) {
    const left = rest.length - at;
    let target: number | undefined;
    if (left < max) {
      for (const id of bySize(unchanged, next))
        if ((next.get(id) as Endpoint[]).length + left <= max) {
          target = id;
          break;
        }
    }
    if (target !== undefined) {
      unchanged.splice(unchanged.indexOf(target), 1);
      updated.push(target);
      next.set(target, [...(next.get(target) as Endpoint[])]);
    } else {
      target = freed.length > 0 ? (freed.shift() as number) : nextFreeId(used, fresh);
      fresh = target + 1;
      used.add(target);
      next.set(target, []);
      created.push(target);
    }
    fill(target);
  }
  const written = [...updated, ...created].sort((a, b) => a - b);
  for (const id of written) (next.get(id) as Endpoint[]).sort(compareEndpoints);
  const pieces = [...next.entries()].sort(([a], [b]) => a - b).map(([id, endpoints]) => ({ id, endpoints }));
  return { pieces, written, removed: freed };
}

/** Ids by their piece's size, largest first, then by id (so the choice never depends on order). */
function bySize(ids: readonly number[], next: ReadonlyMap<number, Endpoint[]>): number[] {
  const size = (id: number) => (next.get(id) as Endpoint[]).length;
  return [...ids].sort((a, b) => size(b) - size(a) || a - b);
}

function nextFreeId(used: ReadonlySet<number>, from: number): number {
  let id = from;
  while (used.has(id)) id++;
  return id;
}

/**
 * One shard's endpoints from its pieces: in canonical order (sortUniqueEndpoints' for endpoints of
 * distinct keys), each key once, so the record equals the one that was stored whole. A piece
 * missing (read while a writer deleted it) contributes nothing.
 */
export function shardFromPieces(pieces: readonly (readonly Endpoint[] | undefined)[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const p of pieces) if (p) for (const e of p) out.push(e);
  out.sort(compareEndpoints);
  let w = 0;
  for (let i = 0; i < out.length; i++)
    if (w === 0 || compareEndpoints(out[w - 1] as Endpoint, out[i] as Endpoint) !== 0)
      out[w++] = out[i] as Endpoint;
  out.length = w;
  return out;
}

/** How many endpoints a record holds over all its shards. */
export function endpointCount(record: EndpointShardsRecord): number {
  let n = 0;
  for (const list of Object.values(record.shards)) n += list.length;
  return n;
}
