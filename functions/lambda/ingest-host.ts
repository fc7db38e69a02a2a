/**
 * The ingest function's handler, built once per container: the same hono ingest app as Node and the
 * Worker (functions/ingest.ts: POST /v1/events, /v1/resync, /v1/admission, GET /ready) over this
 * container's mesh core, behind a function URL or an API Gateway HTTP API (hono/aws-lambda). A
 * batch is applied over the shared store; when it queued a push, the debounce function is invoked
 * asynchronously (InvocationType Event), at most once per invocation, before the answer is
 * returned (a Lambda is frozen once it answers, so nothing may be left in flight).
 */
import type { Context as LambdaContext } from "aws-lambda";
import { handle, type LambdaEvent } from "hono/aws-lambda";
import { logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { gatewayStatusOver } from "../gateway-status.ts";
import { createIngestApp } from "../ingest.ts";
import { coldStartLogger, createLambdaMesh, type LambdaDeps } from "./mesh.ts";

/** Invokes the debounce function once, asynchronously; rejects when Lambda refused the call. */
export type InvokeDebounce = () => Promise<void>;

/** What the ingest handler needs beyond the common deps: how to wake the debounce function. */
export interface IngestHostDeps extends LambdaDeps {
  invokeDebounce: InvokeDebounce;
  /** performance.now() when the entry module was loaded (cold start). */
  loadedAt?: number;
}

/** What a caller without a token is told: a function URL has no loopback, so ingest needs EDGEPILOT_TOKEN. */
export const lambdaNoTokenRefusal =
  "no EDGEPILOT_TOKEN is set, so this function refuses all ingest: set it in the function's environment " +
  "and send it as `Authorization: Bearer <token>`";

/** The handler hono/aws-lambda makes of the app: a function URL (payload 2.0) or API Gateway event in, a result out. */
export type IngestHandler = (
  event: LambdaEvent,
  context: LambdaContext,
) => Promise<Awaited<ReturnType<ReturnType<typeof handle>>>>;

/** Builds the container's core and app now; each invocation waits for the core's start. */
export function createIngestHandler(deps: IngestHostDeps): IngestHandler {
  const { config, log } = deps;
  let wanted = false;
  // A batch that queued a push (or the registry becoming synced) asks for a turn: noted here, sent once.
  const mesh = createLambdaMesh(deps, {
    requestTurn: () => {
      wanted = true;
    },
  });
  const app = createIngestApp({
    core: mesh.core.ingest,
    token: config.token,
    clusterId: config.clusterId,
    allowUnauthenticated: () => false,
    unauthenticatedRefusal: lambdaNoTokenRefusal,
    log,
    ...gatewayStatusOver(mesh.store, config.registry.domainSuffix),
  });
  const serve = handle(app);
  const cold = coldStartLogger(log, "ingest", deps.loadedAt ?? performance.now());
  return async (event, context) => {
    await mesh.started;
    wanted = false;
    const result = await serve(event, context);
    if (wanted) {
      wanted = false;
      await deps
        .invokeDebounce()
        .catch((err: unknown) =>
          logWarn(
            log,
            `debounce: invoking the debounce function failed, its one-minute schedule will push: ${logSafe(err)}`,
          ),
        );
    }
    cold();
    return result;
  };
}
