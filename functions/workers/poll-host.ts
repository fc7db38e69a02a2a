/**
 * DeltaPollService inside the MeshStore Durable Object. The Worker forwards every Poll and Watch
 * here (a fetch to the stub); the object keeps waiting polls and open Watch streams in memory and,
 * attached to the mesh core's change feed, wakes the ones each push concerns: each recomputes its
 * delta from the object's own SQL store (one shared read per push, no RPC) and writes it to its
 * stream, which the Worker pipes back untouched.
 */
import { createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import type { Limits } from "../../lib/config.ts";
import type { FeedHub } from "../../lib/core/change-feed.ts";
import type { XdsReporter } from "../../lib/core/hooks.ts";
import { createPollNackLogger } from "../../lib/core/poll-nack.ts";
import type { SyncGate } from "../../lib/resources/sync-gate.ts";
import type { Store } from "../../lib/store/store.ts";
import { createPollHub } from "../../lib/xds/poll-hub.ts";
import { createPollServer } from "../../lib/xds/poll-serve.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { createViews, sidecarViewOptions } from "../../lib/xds/view-source.ts";
import { byForwardedIdentity, createAuthInterceptor } from "../auth.ts";
import { createPollRoutes } from "../poll.ts";

/**
 * The Durable Object's side of DeltaPollService; a hub of the core's change feed: `publish` wakes
 * the polls and streams a push concerns (all of them when it cannot say, e.g. the gate opening),
 * `open` counts open Watch streams plus waiting polls (bounded by EDGEPILOT_MAX_STREAMS).
 */
export interface PollHost extends FeedHub {
  /** Serves one forwarded Poll or Watch (Connect JSON or binary); other paths answer 404. */
  fetch(request: Request): Promise<Response>;
}

/**
 * Builds the host over the object's own store; `gate` holds removals until the registry is synced.
 * Every call passes the same interceptor as the Worker's routes, fed the identity the Worker
 * verified (poll-forward.ts): a call without one is Unauthenticated, and the node's namespace is
 * checked against it here, where the body is read.
 */
export function createPollHost(
  store: Store,
  limits: Limits,
  gate?: SyncGate,
  xds?: XdsReporter,
  registry?: Parameters<typeof sidecarViewOptions>[0],
): PollHost {
  const source = createStoreSource(store);
  const hub = createPollHub(source);
  // Per-namespace views over the object's own store, dropped by the pushes that change them.
  const views = createViews({ store, ...(registry && sidecarViewOptions(registry)) });
  // The Worker keeps no proxy status today (it serves no ADS stream, and nothing sweeps expired
  // proxy/ records in the object): a Poll/Watch NACK is accepted and logged once, not stored. The
  // Node runtime records it (lib/core/poll-nack.ts createPollNackRecorder).
  const onNack = createPollNackLogger((line) => console.log(line));
  const server = createPollServer({ source, hub, limits, gate, views, onNack, ...(xds && { xds }) });
  const router = createConnectRouter({
    interceptors: [createAuthInterceptor(byForwardedIdentity, (line) => console.log(line))],
  });
  createPollRoutes(server, limits)(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, createFetchHandler(h)]));
  return {
    async fetch(request) {
      const path = new URL(request.url).pathname;
      const handler = handlers.get(path);
      if (!handler)
        return Response.json({ error: `no route for ${request.method} ${path}` }, { status: 404 });
      // request.signal aborts when the client leaves (wrangler.toml's enable_request_signal):
      // Connect passes it to the handler, so a Watch or long poll ends and frees its place at once.
      return handler(request);
    },
    publish(changes) {
      views.publish(changes);
      hub.publish(changes);
    },
    get open() {
      return server.open;
    },
  };
}
