/**
 * Ingest inside the MeshStore Durable Object: the same createIngestApp as Node (functions/ingest.ts),
 * over the object's own SQL store (no RPC), feeding the object's one sync tracker and arming its own
 * alarm. The Worker forwards each batch here as one call (ingest-forward.ts); the object's single
 * app serializes batches, so per-object resourceVersion checks are exact across isolates. Calls
 * that did not come through the Worker (no forwarded identity) are refused with 401.
 */
import type { Hono } from "hono";
import type { Config } from "../../lib/config.ts";
import type { SyncTracker } from "../../lib/push/sync-tracker.ts";
import type { Store } from "../../lib/store/store.ts";
import { createIngestApp } from "../ingest.ts";
import { forwardedIngest } from "./ingest-forward.ts";

/** What a call that reached the object some other way than through the Worker is told. */
export const notForwardedRefusal = "not authenticated: ingest reaches the mesh only through the Worker";

/** Whether the object's ingest app serves `path` (the rest is Poll and Watch). */
export function isIngestPath(path: string): boolean {
  return path === "/ready" || path.startsWith("/v1/");
}

/** Builds the object's ingest app (and GET /ready, answered from the object's sync record). */
export function createIngestHost(options: {
  store: Store;
  config: Config;
  sync: SyncTracker;
  /** Arms the object's alarm (no stub call): a batch that queued a push gets its debounce turn. */
  kick: () => Promise<void>;
  log: (line: string) => void;
}): Hono {
  const { store, config, sync, kick, log } = options;
  return createIngestApp({
    store,
    registry: config.registry,
    now: () => Date.now(),
    token: undefined,
    clusterId: config.clusterId,
    allowUnauthenticated: (c) => forwardedIngest(c.req.raw.headers),
    unauthenticatedRefusal: notForwardedRefusal,
    // The batch is applied and queued already; the cron kick is the safety net for a lost one.
    onEnqueued: () =>
      kick().catch((err: unknown) => log(`ingest: kick failed, the cron trigger will push: ${err}`)),
    sync,
    log,
  });
}
