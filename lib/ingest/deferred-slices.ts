/**
 * The shard refreshes of one watch batch, done once per service: each EndpointSlice (or v1
 * Endpoints) event only notes its new raw piece, and the batch refreshes every noted service in
 * one rebuild (shard-refresh.ts refreshSlices) before the next event of another kind and at its
 * end. A batch of P slices of one service then lists, joins, sorts and writes its shard once, not
 * P times (O(P) instead of O(P²) in the service's endpoints).
 *
 * A Service event notes its whole-shard refresh the same way (noteService), behind its own
 * service's earlier changes (flushService, which applyEvents calls before every Service event):
 * it reads and writes only its own service's pieces and shard, so the other services' noted
 * slices stay noted. The whole refresh runs first at the flush, then the slices noted after it,
 * each from the store as the per-event order leaves it; it is skipped when it can change nothing
 * (no piece stored and no shard of this cluster: a new service), and its push is dropped (the
 * Service's own full push names the service). A service's pieces are listed once per flush.
 *
 * What proxies see is the same: a batch's pushes are merged anyway (batch-pushes.ts), and the one
 * rebuild compares the shard as the batch found it with the shard it leaves (never seen ▶ full,
 * changed ▶ incremental, same ▶ none, zero ▶ shard dropped, key kept). A slice changed and changed
 * back within one batch needs no push, as Istio's debounce would merge it. Every other event
 * kind (a Pod, a Node, a ServiceEntry...) reads shards or pieces of any service, so every noted
 * refresh runs before it: it finds the store as the per-event order left it.
 */
import { mergeAll, type PushRequest, type Service, shardKeyString } from "../model/index.ts";
import type { SlicePiece } from "../registry/kube/records.ts";
import { type EndpointShardsStored, isPiecedHead } from "../shards/shard-pieces.ts";
import { readShards } from "../shards/shard-store.ts";
import { keys } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { refreshShard, refreshSlices, type ServiceKey, sameRaw, storedPieces } from "./shard-refresh.ts";

/** One batch's noted shard refreshes. */
export interface DeferredSlices {
  /**
   * Notes a slice's new raw piece (undefined: the slice is gone from the service); false when it
   * is the same as what the service has for it (stored, or noted earlier in the batch).
   */
  note(ctx: IngestContext, svc: ServiceKey, name: string, piece: SlicePiece | undefined): Promise<boolean>;
  /**
   * Notes the whole-shard refresh a Service event needs after writing `service` (its record in
   * this cluster). Throws when the service has noted changes: flushService it first.
   */
  noteService(svc: ServiceKey, service: Service): void;
  /** Refreshes what is noted for one service (nothing when nothing is); the push it needs. */
  flushService(ctx: IngestContext, svc: ServiceKey): Promise<PushRequest | undefined>;
  /** Refreshes every noted service once, in the order first noted, and forgets them; their merged push. */
  flush(ctx: IngestContext): Promise<PushRequest | undefined>;
  /** Services noted and not refreshed yet. */
  readonly pending: number;
}

/** The event kinds whose changes are noted, not applied at once, and that leave other services' notes be. */
export const deferredKinds: ReadonlySet<string> = new Set(["EndpointSlice", "Endpoints"]);

/** What is noted for one service. */
interface Noted {
  svc: ServiceKey;
  /** Set by a Service event: its record, refreshed whole before the slices noted after it. */
  service: Service | undefined;
  /** The service's pieces as listed when first needed (what the refresh starts from). */
  stored: Map<string, SlicePiece> | undefined;
  pieces: Map<string, SlicePiece | undefined>;
}

const serviceId = (svc: ServiceKey) => `${svc.namespace}\n${svc.hostname}`;

/** An empty DeferredSlices. */
export function createDeferredSlices(): DeferredSlices {
  const byService = new Map<string, Noted>();
  const entry = (svc: ServiceKey): Noted => {
    const id = serviceId(svc);
    const found = byService.get(id);
    if (found) return found;
    const noted: Noted = { svc, service: undefined, stored: undefined, pieces: new Map() };
    byService.set(id, noted);
    return noted;
  };
  return {
    async note(ctx, svc, name, piece) {
      const noted = entry(svc);
      noted.stored ??= await storedPieces(ctx, svc);
      const before = noted.pieces.has(name) ? noted.pieces.get(name) : noted.stored.get(name);
      if (sameRaw(before, piece)) return false;
      noted.pieces.set(name, piece);
      return true;
    },
    noteService(svc, service) {
      const id = serviceId(svc);
      if (byService.has(id))
        throw new Error(`deferred refresh: ${svc.hostname} has noted changes; flush them first`);
      byService.set(id, { svc, service, stored: undefined, pieces: new Map() });
    },
    async flushService(ctx, svc) {
      const id = serviceId(svc);
      const noted = byService.get(id);
      if (!noted) return undefined;
      byService.delete(id);
      return refreshNoted(ctx, noted);
    },
    async flush(ctx) {
      const pushes: PushRequest[] = [];
      for (const noted of byService.values()) {
        await ctx.pace?.();
        const push = await refreshNoted(ctx, noted);
        if (push) pushes.push(push);
      }
      byService.clear();
      return mergeAll(pushes);
    },
    get pending() {
      return byService.size;
    },
  };
}

/** Runs one service's noted refreshes in the order the per-event path ran them; the slices' push. */
async function refreshNoted(ctx: IngestContext, noted: Noted): Promise<PushRequest | undefined> {
  const { svc, service, pieces } = noted;
  let stored = noted.stored ?? (await storedPieces(ctx, svc));
  if (service && (stored.size > 0 || (await hasClusterShard(ctx, svc)))) {
    // The whole refresh's push is dropped: the Service event's own full push names the service.
    await refreshShard(ctx, svc, undefined, service, stored);
    // It may rewrite pieces (what they were joined to): the slices start from what it left.
    if (pieces.size > 0) stored = await storedPieces(ctx, svc);
  }
  return pieces.size === 0 ? undefined : refreshSlices(ctx, svc, pieces, stored);
}

/**
 * Whether the service's EndpointShards hold a shard of this cluster (with no piece stored, only a
 * whole refresh drops it): told by the value stored whole, else by the assembled record.
 */
async function hasClusterShard(ctx: IngestContext, svc: ServiceKey): Promise<boolean> {
  const stored = (await ctx.store.get<EndpointShardsStored>(keys.shards(svc.namespace, svc.hostname)))?.value;
  if (stored === undefined) return false;
  const record = isPiecedHead(stored) ? await readShards(ctx.store, svc.namespace, svc.hostname) : stored;
  return record !== undefined && Object.hasOwn(record.shards, shardKeyString(ctx.shard));
}
