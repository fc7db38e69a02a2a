/** Starts and stops the Node runtime; main.ts and the e2e tests both use it. */

import { readFile } from "node:fs/promises";
import type { Server as HttpServer } from "node:http";
import { createServer as createH2cServer, type Http2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { isLoopback, xdsAuthLogLine } from "../../lib/auth/config.ts";
import type { Config } from "../../lib/config.ts";
import { createPushSignal } from "../../lib/push/signal.ts";
import type { Store } from "../../lib/store/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { createPollHub } from "../../lib/xds/poll-hub.ts";
import { createPollServer } from "../../lib/xds/poll-serve.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { byGuard, createAuthInterceptor } from "../auth.ts";
import { setupGuard } from "../auth-setup.ts";
import { mountConnect } from "../connect.ts";
import { debounceTurn } from "../debounce.ts";
import { createIngestApp } from "../ingest.ts";
import { createPollRoutes } from "../poll.ts";
import { mountRest } from "../rest.ts";
import { createXdsRoutes } from "../xds.ts";
import { createDebounceTimer } from "./debounce-timer.ts";

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
}

/** Binds both ports and resolves once both serve; rejects (naming the variable) when an XDS_AUTH key source is bad. */
export async function startNodeRuntime(config: Config, options: NodeRuntimeOptions): Promise<NodeRuntime> {
  const { log } = options;
  const store = createMemoryStore();
  const now = () => Date.now();
  // Every read path (ADS, Fetch, Poll/Watch, REST, StatusService) on both ports asks this guard.
  const { guard, ready } = setupGuard(config.xdsAuth, { now, log, readFile: (p) => readFile(p, "utf8") });
  await ready;
  const auth = [createAuthInterceptor(byGuard(guard), log)];
  const pushes = createPushSignal((err) => log(`xds: push listener failed: ${err}`));
  const shutdown = new AbortController();
  const source = createStoreSource(store);
  // Waiting polls and Watch streams: woken by each flush's changes, ended by shutdown.
  const pollHub = createPollHub(source);
  const polls = createPollServer({ source, hub: pollHub, limits: config.limits, shutdown: shutdown.signal });
  let serving = false;

  const timer = createDebounceTimer({
    turn: () => debounceTurn({ store, config, now }),
    now,
    log,
    onTurn: (turn) => {
      for (const f of turn.flushes) {
        if (f.changes.length === 0 && !f.recovered) continue;
        const latency = f.request ? now() - f.request.start : 0;
        log(
          `push ${f.version}: ${f.request?.full ? "full" : "incremental"}, ${f.changes.length} resource(s) changed, ` +
            `${latency}ms after the first event, ${pushes.size + polls.open} stream(s)`,
        );
        pushes.emit(f.version);
        // A recovered flush may have published changes it cannot name: wake every poll.
        pollHub.publish(f.recovered ? undefined : f.changes);
      }
    },
  });

  const app = createIngestApp({
    store,
    registry: config.registry,
    now,
    token: config.token,
    clusterId: config.clusterId,
    allowUnauthenticated: (c) => isLoopback(getConnInfo(c).remote.address),
    onEnqueued: () => timer.poke(),
    ready: () => serving,
    log,
  });
  const { maxStreams, maxNamesPerRequest } = config.limits;
  const xdsRoutes = createXdsRoutes({
    store,
    pushes,
    shutdown: shutdown.signal,
    log,
    limits: { maxStreams, maxNamesPerRequest },
  });
  const pollRoutes = createPollRoutes(polls, config.limits);
  // PORT also serves REST-JSON xDS and DeltaPollService for HTTP/1.1 Connect clients.
  mountRest(app, { source, limits: config.limits, guard, log });
  mountConnect(app, pollRoutes, auth);

  const http = serve({ fetch: app.fetch, port: config.port, hostname: config.host });
  await listening(http);
  const h2 = createH2cServer(
    connectNodeAdapter({
      interceptors: auth,
      routes: (router) => {
        xdsRoutes(router);
        pollRoutes(router);
      },
    }),
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
  await listening(h2);
  serving = true;
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
      await timer.stop();
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
    },
  };
}

function listening(server: {
  listening: boolean;
  once(event: "listening" | "error", f: (e?: Error) => void): unknown;
}) {
  return new Promise<void>((resolve, reject) => {
    if (server.listening) return resolve();
    server.once("listening", () => resolve());
    server.once("error", (e) => reject(e));
  });
}
