/** Starts and stops the Node runtime; main.ts and the e2e tests both use it. */

import { readFile } from "node:fs/promises";
import type { Server as HttpServer } from "node:http";
import { createServer as createH2cServer, type Http2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { isLoopback, xdsAuthLogLine } from "../../lib/auth/config.ts";
import { type Config, sharedStore } from "../../lib/config.ts";
import { createMeshCore } from "../../lib/core/mesh-core.ts";
import { createPushLogObserver } from "../../lib/core/push-log.ts";
import { IstioCertificateService } from "../../lib/gen/istio/v1/auth/ca_pb.ts";
import { type ListenTarget, listenError } from "../../lib/listen-error.ts";
import { attachMetrics, createRegistry, measureStore } from "../../lib/metrics/index.ts";
import { createPace } from "../../lib/pace.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import type { Store } from "../../lib/store/index.ts";
import { proxyStatusWriteIntervalMs, sharedProxyStatusWriteIntervalMs } from "../../lib/xds/proxy-status.ts";
import { type AdsXdsServerSettings, createXdsServer } from "../../lib/xds/server.ts";
import { createAdmission, createAdmissionInterceptor } from "../admission.ts";
import { byGuard, createAuthInterceptor, restAuth } from "../auth.ts";
import { setupGuard } from "../auth-setup.ts";
import { createCaRoutes } from "../ca.ts";
import { mountConnect } from "../connect.ts";
import { mountDebug } from "../debug.ts";
import { gatewayStatusOver } from "../gateway-status.ts";
import { createIngestApp } from "../ingest.ts";
import { mountMetrics } from "../metrics.ts";
import { createPollRoutes } from "../poll.ts";
import { mountRest } from "../rest.ts";
import { createXdsRoutes } from "../xds.ts";
import { serveAdsH2 } from "./ads-h2.ts";
import { setupNodeCa } from "./ca.ts";
import { createDebounceTimer } from "./debounce-timer.ts";
import { addEventLoopLag } from "./event-loop-lag.ts";
import { withGrpcMessageTrailer } from "./grpc-message-trailer.ts";
import { startMeshFiles } from "./mesh-files.ts";
import { nodeSha256 } from "./sha256.ts";
import { openStore } from "./store.ts";
import { xdsServerOptions } from "./xds-server-options.ts";

export interface NodeRuntime {
  /** The ports actually bound (useful when 0 was asked for). */
  port: number;
  xdsPort: number;
  store: Store;
  stop(): Promise<void>;
}

export interface NodeRuntimeOptions {
  log: (line: string) => void;
  /** How long stop() waits for connections to close by themselves before cutting them (ms). */
  shutdownGraceMs?: number;
  /**
   * A store the caller opened instead of config.store's (tests: several runtimes over one store),
   * and whether other instances write it too (then as with a shared config.store: see sharedStore).
   */
  store?: { store: Store; shared: boolean };
}

/**
 * The xDS server settings of a Node instance (server-defaults.test.ts compares them with the other
 * hosts'): over a shared store (DynamoDB), each status write is billed and other instances write
 * too, so a stream's record is rewritten at most every sharedProxyStatusWriteIntervalMs.
 */
export function nodeXdsSettings(
  config: Pick<Config, "limits" | "registry">,
  shared: boolean,
): AdsXdsServerSettings {
  return {
    limits: config.limits,
    registry: config.registry,
    proxyStatus: { writeIntervalMs: shared ? sharedProxyStatusWriteIntervalMs : proxyStatusWriteIntervalMs },
  };
}

/** Binds both ports and resolves once both serve; rejects (naming the variable) when an XDS_AUTH key source is bad. */
export async function startNodeRuntime(config: Config, options: NodeRuntimeOptions): Promise<NodeRuntime> {
  const { log } = options;
  // Versions hash on this thread: the same SHA-256 as WebCrypto, without a thread-pool trip each.
  useSyncSha256(nodeSha256);
  const opened = options.store
    ? { store: options.store.store, close: () => {} }
    : await openStore(config.store, log);
  const shared = options.store ? options.store.shared : sharedStore(config.store);
  // Every store call is counted (and sampled for latency) on the registry GET /metrics exposes.
  const registry = createRegistry();
  const store = measureStore(opened.store, registry);
  const now = () => Date.now();
  // Every read path (ADS, Fetch, Poll/Watch, REST, StatusService) on both ports asks this guard.
  const { guard, ready, keys } = setupGuard(config.xdsAuth, {
    now,
    log,
    readFile: (p) => readFile(p, "utf8"),
  });
  await ready;
  // IstioCertificateService: a plug-in CA (ROOT_CA_DIR) or the stored root; a bad ROOT_CA_DIR stops start-up here.
  const caRoutes = createCaRoutes(
    await setupNodeCa(config, { store, keys, registry, now, log }),
    config.limits.maxRequestBytes,
  );
  const authenticate = byGuard(guard);
  const auth = [createAuthInterceptor(authenticate, log)];
  const shutdown = new AbortController();
  // The mesh core owns ingest, start-up sync, the debounce turn, the push log and the change feed;
  // this host adds the timer that drives its turns and the transports.
  const core = createMeshCore({
    store,
    config,
    timers: {
      now,
      setTimeout: (f, ms) => setTimeout(f, ms),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    },
    log,
    requestTurn: () => timer.poke(),
    // Other instances write a shared store too: ingest takes its lease, and this instance follows
    // their pushes (and turns for what they queued) every EDGEPILOT_STORE_POLL_INTERVAL.
    ...(shared && { follow: { intervalMs: config.storePollIntervalMs } }),
  });
  // One line per push, naming how many streams of this instance it reached.
  core.observe(createPushLogObserver(log, { streams: true }));
  // GET /metrics: the core's metrics (its hooks and store) and this process's event-loop lag.
  const metrics = attachMetrics(core, registry);
  const stopLag = addEventLoopLag(metrics.registry);
  // The read side, built once: ADS (connect and the direct gRPC path), Fetch, Poll/Watch, REST, debug.
  const xds = createXdsServer(core, {
    ...nodeXdsSettings(config, shared),
    log,
    now,
    shutdown: shutdown.signal,
  });
  // A whole-mesh publish over the memory store yields every ~10 ms (no I/O would let others run).
  const timer = createDebounceTimer({ turn: () => core.turn({ pace: createPace() }), now, log });
  const startState = await core.start();
  // MESH_CONFIG_FILE / MESH_NETWORKS_FILE: applied through ingest before serving, then watched.
  const meshFiles = await startMeshFiles({ files: config.registry.meshFiles ?? {}, core: core.ingest, log });
  // Proxy status records left by a process that died (durable stores) expire and are swept.
  xds.start();
  // A durable store loaded synced but not yet published: one turn publishes it and opens the gate.
  if (startState.synced && !startState.published) timer.poke();
  let serving = false;

  const app = createIngestApp({
    core: core.ingest,
    token: config.token,
    clusterId: config.clusterId,
    allowUnauthenticated: (c) => isLoopback(getConnInfo(c).remote.address),
    ready: () => serving,
    log,
    ...gatewayStatusOver(store, config.registry.domainSuffix),
  });
  const xdsRoutes = createXdsRoutes(xds, { ads: xds.ads });
  // One admission bucket for every call on XDS_PORT, whichever path serves it.
  const admission = createAdmission({ ratePerSecond: config.limits.maxRequestsPerSecond });
  const pollRoutes = createPollRoutes(xds.poll, config.limits);
  // PORT also serves REST-JSON xDS and DeltaPollService for HTTP/1.1 Connect clients.
  mountRest(app, { ...xds.rest, guard, log });
  mountConnect(app, pollRoutes, auth);
  // The CA authenticates its callers itself (TOKEN_AUDIENCES), outside XDS_AUTH's interceptor.
  mountConnect(app, caRoutes);
  // /debug/* (syncz, configz, ...): read paths, so behind XDS_AUTH like REST.
  mountDebug(app, xds.debug, restAuth(guard));
  mountMetrics(app, guard, metrics.expose);

  const http = serve({ fetch: app.fetch, port: config.port, hostname: config.host });
  await listening(http, { variable: "PORT", port: config.port, host: config.host });
  const connectListener = connectNodeAdapter({
    routes: (router) => {
      xdsRoutes(router);
      pollRoutes(router);
    },
    // One message on XDS_PORT is bounded like a Poll/REST body (gRPC servers' 4 MiB default).
    readMaxBytes: config.limits.maxRequestBytes,
    // The admission rate first (outermost), so a flood is refused before any token is verified.
    interceptors: [createAdmissionInterceptor(admission), ...auth],
  });
  // IstioCertificateService first, under the same admission bucket but not XDS_AUTH; every other
  // path falls through to the xDS routes.
  const caListener = withGrpcMessageTrailer(
    connectNodeAdapter({
      routes: caRoutes,
      readMaxBytes: config.limits.maxRequestBytes,
      interceptors: [createAdmissionInterceptor(admission)],
      fallback: connectListener,
    }),
    [`/${IstioCertificateService.typeName}/`],
  );
  // ADS over gRPC is served straight on node:http2's raw streams (functions/node/ads-h2.ts); the
  // rest by connect, through node's compatibility request/response layer.
  const h2 = createH2cServer(xdsServerOptions(config.limits));
  serveAdsH2(
    h2,
    { ads: xds.ads, admission, authenticate, readMaxBytes: config.limits.maxRequestBytes, log },
    caListener,
  );
  const sessions = new Set<Http2Session>();
  h2.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  // A session closed gracefully then destroyed waits for its peer's FIN; a peer that stopped
  // reading never sends one, so the grace period cuts the sockets themselves.
  const sockets = new Set<Socket>();
  h2.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  h2.listen(config.xdsPort, config.host);
  await listening(h2, { variable: "XDS_PORT", port: config.xdsPort, host: config.host });
  serving = true;
  // A durable store may hold pushes queued, or a flush cut short, before a restart: finish them now.
  timer.poke();
  const port = (http.address() as AddressInfo).port;
  const xdsPort = (h2.address() as AddressInfo).port;
  log(
    `edgepilot: ingest and REST on http://${config.host}:${port}, xDS (gRPC, Connect) on h2c ${config.host}:${xdsPort}`,
  );
  log(xdsAuthLogLine(config.xdsAuth, { host: config.host, worker: false }));
  if (config.token === undefined) {
    log("edgepilot: EDGEPILOT_TOKEN is not set: ingest accepts unauthenticated calls from loopback only");
  }

  return {
    port,
    xdsPort,
    store,
    async stop() {
      serving = false;
      shutdown.abort();
      meshFiles.stop();
      await timer.stop();
      core.stop();
      xds.stop();
      stopLag();
      metrics.detach();
      for (const s of sessions) s.close();
      const closed = Promise.all([
        new Promise<void>((resolve) => http.close(() => resolve())),
        new Promise<void>((resolve) => h2.close(() => resolve())),
      ]);
      // HTTP/1.1 Watch responses end a moment after the abort; close their keep-alive connections
      // as they go idle instead of waiting for the grace period.
      const sweep = setInterval(() => (http as HttpServer).closeIdleConnections(), 20);
      // Streams ended above; a proxy that keeps its half of a stream open must not hold us up.
      const grace = setTimeout(() => {
        for (const s of sessions) s.destroy();
        for (const socket of sockets) socket.destroy();
        (http as HttpServer).closeAllConnections();
      }, options.shutdownGraceMs ?? 2000);
      await closed;
      clearTimeout(grace);
      clearInterval(sweep);
      opened.close();
    },
  };
}

function listening(
  server: {
    listening: boolean;
    once(event: "listening" | "error", f: (e?: Error) => void): unknown;
  },
  target: ListenTarget,
) {
  return new Promise<void>((resolve, reject) => {
    if (server.listening) return resolve();
    server.once("listening", () => resolve());
    // One line naming the port and its variable (a port in use), not a stack.
    server.once("error", (e) => reject(listenError(e, target)));
  });
}
