/**
 * Ingest inside the MeshStore Durable Object: the same createIngestApp as Node (functions/ingest.ts),
 * over the object's mesh core (its own SQL store, no RPC; the core notes sync and arms the alarm). The Worker forwards each batch here as one call (ingest-forward.ts); the object's single
 * app serializes batches, so per-object resourceVersion checks are exact across isolates. Calls
 * that did not come through the Worker (no forwarded identity) are refused with 401.
 */
import type { Hono } from "hono";
import type { Config } from "../../lib/config.ts";
import type { IngestCore } from "../../lib/core/ingest.ts";
import type { Store } from "../../lib/store/store.ts";
import { gatewayStatusOver } from "../gateway-status.ts";
import { createIngestApp } from "../ingest.ts";
import { forwardedIngest } from "./ingest-forward.ts";

/** What a call that reached the object some other way than through the Worker is told. */
export const notForwardedRefusal = "not authenticated: ingest reaches the mesh only through the Worker";

/** Whether the object's ingest app serves `path` (the rest is Poll and Watch). */
export function isIngestPath(path: string): boolean {
  return path === "/ready" || path.startsWith("/v1/");
}

/** Builds the object's ingest app (and GET /ready, answered from the object's sync record; GET /v1/gateway-status from `store`). */
export function createIngestHost(options: {
  core: IngestCore;
  config: Pick<Config, "clusterId" | "registry">;
  log: (line: string) => void;
  store: Store;
}): Hono {
  const { core, config, log } = options;
  return createIngestApp({
    core,
    token: undefined,
    clusterId: config.clusterId,
    allowUnauthenticated: (c) => forwardedIngest(c.req.raw.headers),
    unauthenticatedRefusal: notForwardedRefusal,
    log,
    ...gatewayStatusOver(options.store, config.registry.domainSuffix),
  });
}
