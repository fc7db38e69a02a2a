/**
 * The xDS function's handler, built once per container: Connect over a function URL with response
 * streaming (hono/aws-lambda streamHandle over awslambda.streamifyResponse). Envoy's unary Fetch*,
 * DeltaPollService Poll (a long poll held within the invocation's remaining time) and Watch
 * (server streaming until near the invocation's end, then a clean end-of-stream the agent
 * reconnects from with what it holds), REST-JSON /v3/discovery:*, StatusService, /ready, /metrics
 * and /debug/*, every read behind XDS_AUTH as on Node and the Worker; and the CA's
 * IstioCertificateService/CreateCertificate (Connect, gRPC-Web), which authenticates its callers
 * itself as on the other hosts (functions/ca.ts). The container hears of the
 * pushes other functions made through the store, never from them directly: its core (shared) runs a
 * store follower every EDGEPILOT_STORE_POLL_INTERVAL while an invocation is open, and each
 * invocation but the CA's first checks the store once (a container thawed after minutes catches up
 * at once).
 */
import type { Context as LambdaContext } from "aws-lambda";
import { Hono } from "hono";
import { streamHandle } from "hono/aws-lambda";
import { HTTPException } from "hono/http-exception";
import { xdsAuthLogLine } from "../../lib/auth/config.ts";
import type { Config } from "../../lib/config.ts";
import { createStoreFollower } from "../../lib/core/store-follower.ts";
import { logError } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { attachMetrics, createRegistry } from "../../lib/metrics/index.ts";
import { sharedProxyStatusWriteIntervalMs } from "../../lib/xds/proxy-status.ts";
import { createXdsServer, type XdsServerSettings } from "../../lib/xds/server.ts";
import { byGuard, createAuthInterceptor, restAuth } from "../auth.ts";
import { setupGuard } from "../auth-setup.ts";
import { caPathPrefix, createCaRoutes, lazyCa } from "../ca.ts";
import { type PluginCaValues, setupCaFromVariables } from "../ca-variables.ts";
import { mountConnect } from "../connect.ts";
import { mountDebug } from "../debug.ts";
import { mountMetrics } from "../metrics.ts";
import { createPollRoutes } from "../poll.ts";
import { mountRest } from "../rest.ts";
import { createXdsRoutes } from "../xds.ts";
import { coldStartLogger, createLambdaMesh, type LambdaDeps } from "./mesh.ts";

export interface XdsHostDeps extends LambdaDeps {
  /** performance.now() when the entry module was loaded (cold start). */
  loadedAt?: number;
  /**
   * The plug-in CA's variables (CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM; the entry
   * passes process.env, which infra/aws fills from Secrets Manager); none set: the self-signed root
   * kept in the table under ca/root.
   */
  caVariables?: PluginCaValues;
}

/**
 * The part of the invocation's remaining time a call may use: a long poll answers, and a Watch
 * ends with its end-of-stream message, this long before Lambda would cut the invocation (ms).
 */
export function callWindowMs(remainingMs: number): number {
  // A tenth of the time, between 1 s and 3 s: ending a stream takes a store read or two at most.
  const margin = Math.min(3_000, Math.max(1_000, Math.floor(remainingMs / 10)));
  return Math.max(0, remainingMs - margin);
}

/**
 * The xDS server settings of a Lambda container (server-defaults.test.ts compares them with the
 * other hosts'): as Node's over a shared store, whose proxy status records are billed writes; no
 * sweep, since DynamoDB expires proxy records by their TTL attribute and a container runs only
 * while an invocation is open; no ADS, since a function URL cannot serve bidi gRPC.
 */
export function lambdaXdsSettings(
  config: Pick<Config, "limits" | "registry">,
): XdsServerSettings & { ads: false } {
  return {
    limits: config.limits,
    registry: config.registry,
    proxyStatus: { writeIntervalMs: sharedProxyStatusWriteIntervalMs, sweep: false },
    ads: false,
  };
}

/** The streaming handler (awslambda.streamifyResponse's), for a function URL with InvokeMode RESPONSE_STREAM. */
export type XdsHandler = ReturnType<typeof streamHandle>;

/** Builds the container's routes now; every invocation serves one request. */
export function createXdsHandler(deps: XdsHostDeps): XdsHandler {
  const { config, log } = deps;
  const now = deps.now ?? Date.now;
  const registry = createRegistry();
  // The core here carries the feed (fed by its follower), the sync gate (read from the store), the
  // hooks and the metrics: this function never ingests and never flushes.
  const mesh = createLambdaMesh(deps, { registry });
  const { core } = mesh;
  const { sync } = core;
  const metrics = attachMetrics(core, registry);
  // One check at the start of each invocation; the core's own follower polls while it runs.
  const catchUp = createStoreFollower({
    core,
    intervalMs: config.storePollIntervalMs,
    timers: { now, setTimeout: () => undefined, clearTimeout: () => undefined },
    log,
  });
  const { guard, ready, keys } = setupGuard(config.xdsAuth, { now, log });
  // A bad static key source (XDS_JWKS) is said once per container, and every call answers it.
  let keysProblem: string | undefined;
  ready.catch((err: unknown) => {
    keysProblem = err instanceof Error ? err.message : String(err);
    logError(log, `edgepilot: config: ${keysProblem}`);
  });
  log(xdsAuthLogLine(config.xdsAuth, { host: "this function's URL", worker: false }));
  // The read side: views and polls woken by the pushes the follower announces (as on Node); no ADS
  // is built (lambdaXdsSettings), as nothing here could mount it.
  const xds = createXdsServer(core, { ...lambdaXdsSettings(config), log, now });
  const pollRoutes = createPollRoutes(xds.poll, config.limits);
  // The CA is set up during the container's init (one read of ca/root, or the conditional write
  // that makes concurrent cold starts agree on one root); a failed setup is tried again by the next call.
  const ca = lazyCa(() =>
    setupCaFromVariables(deps.caVariables ?? {}, config, { store: mesh.store, keys, registry, now, log }),
  );
  ca().catch(() => undefined);
  const app = new Hono();
  app.get("/ready", async (c) => {
    const { synced, published, timedOut, instance, clusters } = await sync.state();
    return c.json({ ready: true, synced, published, timedOut, instance, clusters });
  });
  mountConnect(
    app,
    (router) => {
      createXdsRoutes(xds)(router);
      pollRoutes(router);
    },
    [createAuthInterceptor(byGuard(guard), log)],
  );
  // CreateCertificate authenticates its callers itself (TOKEN_AUDIENCES), outside XDS_AUTH's interceptor.
  mountConnect(app, createCaRoutes(ca, config.limits.maxRequestBytes));
  mountRest(app, { ...xds.rest, guard, log });
  mountDebug(app, xds.debug, restAuth(guard));
  mountMetrics(app, guard, metrics.expose);
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    const detail = logSafe(err instanceof Error ? (err.stack ?? err.message) : String(err), 4096);
    logError(log, `edgepilot: internal error on ${c.req.method} ${c.req.path}: ${detail}`);
    return c.json({ error: "internal error; see the function's log" }, 500);
  });

  const cold = coldStartLogger(log, "xds", deps.loadedAt ?? performance.now());
  // Each invocation: news from the store first, then the request with the invocation's deadline as
  // its signal (a Watch ends cleanly, a long poll answers what it has).
  const outer = new Hono<{ Bindings: { context: LambdaContext } }>();
  outer.all("*", async (c) => {
    // The CA reads no mesh state: its calls wait neither for the core's start nor for the store's news.
    const meshCall = !c.req.path.startsWith(caPathPrefix);
    await Promise.all([ready.catch(() => undefined), meshCall && mesh.started]);
    if (keysProblem !== undefined) return c.json({ error: `edgepilot: config: ${keysProblem}` }, 500);
    const deadline = callDeadline(callWindowMs(c.env.context.getRemainingTimeInMillis()));
    if (meshCall) await catchUp.check();
    const res = await app.fetch(new Request(c.req.raw, { signal: deadline.signal }));
    cold();
    if (!res.body) {
      deadline.clear();
      return res;
    }
    return new Response(res.body.pipeThrough(new TransformStream({ flush: deadline.clear })), res);
  });
  return streamHandle(outer);
}

/**
 * A signal aborted after `ms`, held by its own timer. Not AbortSignal.timeout: a Request follows
 * its init's signal weakly, and once the handler has returned a streaming response nothing else
 * holds that signal, so it could be collected before it fires and a Watch would never end.
 */
function callDeadline(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
