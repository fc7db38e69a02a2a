/**
 * DeltaPollService inside the MeshStore Durable Object. The Worker forwards every Poll and Watch
 * here (a fetch to the stub); the object's xDS server (lib/xds/server.ts, attached to the mesh
 * core's change feed) keeps waiting polls and open Watch streams in memory and wakes the ones each
 * push concerns: each recomputes its delta from the object's own SQL store (one shared read per
 * push, no RPC) and writes it to its stream, which the Worker pipes back untouched.
 */
import { createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import type { Config } from "../../lib/config.ts";
import type { LogLine } from "../../lib/log/line-log.ts";
import type { PollServer } from "../../lib/xds/poll-serve.ts";
import type { XdsServerSettings } from "../../lib/xds/server.ts";
import { byForwardedIdentity, createAuthInterceptor } from "../auth.ts";
import { createPollRoutes } from "../poll.ts";

/**
 * The xDS server settings of the MeshStore Durable Object (server-defaults.test.ts compares them
 * with the other hosts'). It builds no ADS (Workers cannot serve bidi gRPC) and keeps no proxy
 * status: nothing sweeps expired proxy/ records in the object, so a Poll/Watch NACK is accepted
 * and logged once, not stored.
 */
export function meshStoreXdsSettings(
  config: Pick<Config, "limits" | "registry">,
): XdsServerSettings & { ads: false } {
  return { limits: config.limits, registry: config.registry, proxyStatus: false, ads: false };
}

/** The Durable Object's side of DeltaPollService. */
export interface PollHost {
  /** Serves one forwarded Poll or Watch (Connect JSON or binary); other paths answer 404. */
  fetch(request: Request): Promise<Response>;
}

/**
 * Serves `polls` (the object's xDS server's). Every call passes the same interceptor as the
 * Worker's routes, fed the identity the Worker verified (poll-forward.ts): a call without one is
 * Unauthenticated, and the node's namespace is checked against it here, where the body is read.
 * Refusals are logged to `log`, the object's (LOG_FORMAT / LOG_LEVEL), as the Worker's are.
 */
export function createPollHost(
  polls: PollServer,
  limits: Pick<Config["limits"], "maxRequestBytes">,
  log: LogLine,
): PollHost {
  const router = createConnectRouter({
    interceptors: [createAuthInterceptor(byForwardedIdentity, log)],
  });
  createPollRoutes(polls, limits)(router);
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
  };
}
