/**
 * The Worker's HTTP surface, built once per env: GET /ready, ingest (POST /v1/events, /v1/resync,
 * /v1/admission), the xDS Connect procedures at the root and REST-JSON xDS, all over the one
 * MeshStore Durable Object. Ingest and /ready are forwarded into the object as one call each
 * (ingest-host.ts runs them there); Poll and Watch too, and the object holds them until a push
 * concerns them (poll-host.ts). Fetch, REST-JSON and StatusService read the store over RPC, and so
 * does the CA's IstioCertificateService (ca.ts).
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { xdsAuthLogLine } from "../../lib/auth/config.ts";
import type { Config } from "../../lib/config.ts";
import { logError, logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { createSyncTracker } from "../../lib/push/sync-tracker.ts";
import { createDurableObjectStore, type StoreRpc } from "../../lib/store/durable-object.ts";
import { createXdsServer, type XdsServerSettings } from "../../lib/xds/server.ts";
import { byGuard, createAuthInterceptor } from "../auth.ts";
import { setupGuard } from "../auth-setup.ts";
import { createCaRoutes } from "../ca.ts";
import { mountConnect } from "../connect.ts";
import { mountDebugForward } from "../debug.ts";
import { mountMetrics } from "../metrics.ts";
import { mountRest } from "../rest.ts";
import { createXdsRoutes } from "../xds.ts";
import { lazyWorkerCa } from "./ca.ts";
import { ConfigError, workerConfig } from "./config.ts";
import type { Env } from "./index.ts";
import { mountIngestForward } from "./ingest-forward.ts";
import { workerLog } from "./log.ts";
import type { MeshStore } from "./mesh-store.ts";
import { mountPollForward } from "./poll-forward.ts";

/** The name of the one MeshStore instance that holds the whole mesh. */
export const meshName = "mesh";

/** What a call without a token is told: Workers have no loopback, so ingest needs EDGEPILOT_TOKEN. */
export const noTokenRefusal =
  "no EDGEPILOT_TOKEN is set, so this Worker refuses all ingest: set it (`wrangler secret put EDGEPILOT_TOKEN`, " +
  "or `--var EDGEPILOT_TOKEN:<token>` for wrangler dev) and send it as `Authorization: Bearer <token>`";

/** A new stub for the MeshStore on every call: a stub that saw an exception stays broken, so none is kept. */
export function meshStub(env: Env): DurableObjectStub<MeshStore> {
  return env.MESH.getByName(meshName);
}

/**
 * The xDS server settings of the Worker's isolate (server-defaults.test.ts compares them with the
 * other hosts'). It hears no pushes, so its views read the table's head on every call (one small
 * value) and its parts only when the head changed (lib/xds/view-store.ts); it serves no ADS stream
 * and records no proxy status (Poll NACKs are the Durable Object's).
 */
export function workerXdsSettings(config: Pick<Config, "limits" | "registry">): XdsServerSettings {
  return {
    limits: config.limits,
    registry: config.registry,
    cacheViews: false,
    proxyStatus: false,
    ads: false,
  };
}

const apps = new WeakMap<Env, Hono>();

/**
 * Answers one request. A bad configuration answers 500 naming every bad variable (and is not
 * cached, so fixing the vars fixes the Worker).
 */
export function serve(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
  let app = apps.get(env);
  if (!app) {
    try {
      app = buildApp(env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      console.error(err.message);
      return Response.json({ error: err.message, errors: err.errors }, { status: 500 });
    }
    apps.set(env, app);
  }
  return app.fetch(request, env, ctx);
}

function buildApp(env: Env): Hono {
  const config = workerConfig(env);
  const log = workerLog(config.log);
  const store = createDurableObjectStore(meshRpc(env));
  const kick = () =>
    meshStub(env)
      .kick()
      .catch((err: unknown) => logWarn(log, `sync: kick failed, the cron trigger will push: ${err}`));
  // The read paths' gate: the sync record in the MeshStore, read on every use (isolates come and
  // go). The object's own tracker writes it (ingest runs there) and keeps the timer; should this
  // one see the registry become synced first, it kicks the object.
  const sync = createSyncTracker({
    store,
    options: { timeoutMs: config.syncTimeoutMs, useEndpointSlice: config.registry.useEndpointSlice },
    timers: { now: () => Date.now(), setTimeout: () => undefined, clearTimeout: () => undefined },
    log,
    cached: false,
    requestTurn: () => void kick(),
  });
  const { guard, ready, keys } = setupGuard(config.xdsAuth, { now: () => Date.now(), log });
  ready.catch((err: unknown) =>
    logError(log, `edgepilot: config: ${err instanceof Error ? err.message : err}`),
  );
  log(xdsAuthLogLine(config.xdsAuth, { host: "", worker: true }));
  const app = new Hono();
  const forward = (request: Request) => meshStub(env).fetch(request);
  // /ready answers from the object's sync record, as its ingest sees it: one call.
  app.get("/ready", (c) => forward(c.req.raw));
  // Ingest is authenticated here, then each batch is ONE call into the object, which applies it.
  mountIngestForward(
    app,
    { token: config.token, allowUnauthenticated: () => false, unauthenticatedRefusal: noTokenRefusal },
    forward,
    log,
  );
  // Fetch, REST-JSON and StatusService over the store's RPC; no feed here, so no ADS and no Poll.
  const xds = createXdsServer({ store, sync }, { ...workerXdsSettings(config), log });
  mountConnect(app, createXdsRoutes(xds), [createAuthInterceptor(byGuard(guard), log)]);
  // CreateCertificate authenticates its callers itself (TOKEN_AUDIENCES), outside XDS_AUTH's interceptor;
  // the CA is built on its first call, over the MeshStore's storage (one self-signed root for every isolate).
  mountConnect(
    app,
    createCaRoutes(
      lazyWorkerCa(env, config, { store, keys, now: () => Date.now(), log }),
      config.limits.maxRequestBytes,
    ),
  );
  mountRest(app, { ...xds.rest, guard, log });
  // Poll and Watch run inside the MeshStore: its alarm wakes them (the response streams through).
  // Credentials are checked here; the object checks the node against the identity forwarded with the call.
  mountPollForward(app, config.limits.maxRequestBytes, guard, forward);
  // /debug/* is authenticated here and answered inside the object from its store: one call each.
  mountDebugForward(app, guard, forward);
  // GET /metrics: the core lives in the object, so its exposition is one call there.
  mountMetrics(app, guard, () => meshStub(env).metrics());
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    // The object answers its own errors; this is the call to it (or a read path) failing.
    const detail = logSafe(err instanceof Error ? (err.stack ?? err.message) : String(err), 4096);
    logError(log, `edgepilot: internal error on ${c.req.method} ${c.req.path}: ${detail}`);
    return c.json({ error: "internal error; see the Worker's log" }, 500);
  });
  return app;
}

/** StoreRpc through a fresh stub per call (calls are awaited one by one, so their order holds). */
function meshRpc(env: Env): StoreRpc {
  return {
    storeGet: (key) => meshStub(env).storeGet(key),
    storeGetMany: (keys) => meshStub(env).storeGetMany(keys),
    storePut: (key, value, options) => meshStub(env).storePut(key, value, options),
    storeDelete: (key, options) => meshStub(env).storeDelete(key, options),
    storeList: (prefix, options) => meshStub(env).storeList(prefix, options),
  };
}
