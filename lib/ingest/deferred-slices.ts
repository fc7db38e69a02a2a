/**
 * The slice changes of one watch batch, refreshed once per service: each EndpointSlice (or v1
 * Endpoints) event only notes its new raw piece, and the batch refreshes every noted service in
 * one rebuild (shard-refresh.ts refreshSlices) before the next event of another kind and at its
 * end. A batch of P slices of one service then lists, joins, sorts and writes its shard once, not
 * P times (O(P) instead of O(P²) in the service's endpoints).
 *
 * What proxies see is the same: a batch's pushes are merged anyway (batch-pushes.ts), and the one
 * rebuild compares the shard as the batch found it with the shard it leaves (never seen ▶ full,
 * changed ▶ incremental, same ▶ none, zero ▶ shard dropped, key kept). A slice changed and changed
 * back within one batch now needs no push, as Istio's debounce would merge it. Every other event
 * kind (a Service, a Pod, a Node...) reads shards or pieces, so the noted slices are refreshed
 * before it runs: it finds the store as the per-event order left it.
 */
import { mergeAll, type PushRequest } from "../model/index.ts";
import type { SlicePiece } from "../registry/kube/records.ts";
import { keys } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { refreshSlices, type ServiceKey, sameRaw } from "./shard-refresh.ts";

/** One batch's noted slice changes. */
export interface DeferredSlices {
  /**
   * Notes a slice's new raw piece (undefined: the slice is gone from the service); false when it
   * is the same as what the service has for it (stored, or noted earlier in the batch).
   */
  note(ctx: IngestContext, svc: ServiceKey, name: string, piece: SlicePiece | undefined): Promise<boolean>;
  /** Refreshes every noted service once, in the order first noted, and forgets them; their merged push. */
  flush(ctx: IngestContext): Promise<PushRequest | undefined>;
  /** Services noted and not refreshed yet. */
  readonly pending: number;
}

/** The event kinds whose changes are noted, not applied at once. */
export const deferredKinds: ReadonlySet<string> = new Set(["EndpointSlice", "Endpoints"]);

/** An empty DeferredSlices. */
export function createDeferredSlices(): DeferredSlices {
  const byService = new Map<string, { svc: ServiceKey; pieces: Map<string, SlicePiece | undefined> }>();
  return {
    async note(ctx, svc, name, piece) {
      const k = `${svc.namespace}\n${svc.hostname}`;
      const noted = byService.get(k);
      const before = noted?.pieces.has(name)
        ? noted.pieces.get(name)
        : (await ctx.store.get<SlicePiece>(keys.slice(svc.namespace, svc.hostname, ctx.cluster, name)))
            ?.value;
      if (sameRaw(before, piece)) return false;
      if (noted) noted.pieces.set(name, piece);
      else byService.set(k, { svc, pieces: new Map([[name, piece]]) });
      return true;
    },
    async flush(ctx) {
      const pushes: PushRequest[] = [];
      for (const { svc, pieces } of byService.values()) {
        await ctx.pace?.();
        const push = await refreshSlices(ctx, svc, pieces);
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
