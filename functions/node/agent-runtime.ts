/**
 * `edgepilot agent`'s runtime on Node: the driver of the pure machine (lib/agent/machine.ts), the
 * cache, the local ADS servers (loopback TCP and Unix socket) and GET /ready. See lib/agent/index.ts
 * for the design; this file only does I/O.
 */
import { rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createH2cServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { type AgentConfig, cleartextOffHost } from "../../lib/agent/config.ts";
import {
  type AgentAction,
  type AgentInput,
  initialAgentState,
  removalsAllowed,
  step,
} from "../../lib/agent/machine.ts";
import type { Transport, TransportOptions } from "../../lib/agent/transport.ts";
import { createChangeFeed } from "../../lib/core/change-feed.ts";
import type { DeltaDiscoveryResponse } from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { logError, logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { type BackoffOptions, defaultBackoff } from "../../lib/relay/backoff.ts";
import type { ResourceChange } from "../../lib/resources/changes.ts";
import type { StoredResource } from "../../lib/resources/types.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import type { TypeUrl } from "../../lib/resources/xds-types.ts";
import { createSerial } from "../../lib/serial.ts";
import { keys } from "../../lib/store/keys.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { type AdsXdsServerSettings, createXdsServer } from "../../lib/xds/server.ts";
import { createAdmission } from "../admission.ts";
import { serveAdsH2 } from "./ads-h2.ts";
import { type CacheFile, heldVersions, openCacheFile, restoreCache } from "./agent-cache-file.ts";
import { openConnectUpstream } from "./agent-connect-upstream.ts";
import { startAgentIdentity } from "./agent-identity.ts";
import { tapLocalStreams } from "./agent-local.ts";
import { upstreamTls } from "./agent-tls.ts";
import { watchTokenFile } from "./agent-token.ts";
import { openUpstreamStream, type UpstreamHandlers, type UpstreamStream } from "./agent-upstream.ts";
import { listenOn } from "./listen-on.ts";
import { nodeSha256 } from "./sha256.ts";

/** A running agent. */
export interface RunningAgent {
  /** The local ADS port bound on 127.0.0.1. */
  port: number;
  readyPort: number;
  /** True once a first upstream response is cached, or a disk cache was loaded at start (GET /ready). */
  ready(): boolean;
  /** Upstream responses and the resources they carried, since start (what reconnects cost). */
  upstreamStats(): { responses: number; resources: number };
  stop(): Promise<void>;
}

/** Where the agent logs, and tunables a test may shorten (defaults are production's). */
export interface AgentOptions {
  log: (line: string) => void;
  /** How long an upstream response waits for a local NACK before it is ACKed (default 1s). */
  ackDelayMs?: number;
  backoff?: BackoffOptions;
  /** The largest message taken from a proxy or the upstream (default 16 MiB). */
  readMaxBytes?: number;
  /** How soon a cache change reaches the disk cache (default 2s; EDGEPILOT_AGENT_CACHE_DIR). */
  cacheSaveAfterMs?: number;
  /** The Watch ─▶ Poll fallback rule (lib/agent/transport.ts), a long poll's wait, a Watch's first-answer limit. */
  transport?: TransportOptions & { pollWaitMs?: number; firstAnswerMs?: number };
  /** The retry backoff of the workload certificate's CA calls (default 100 ms ▶ 60 s). */
  certBackoff?: BackoffOptions;
}

/**
 * The agent's xDS server settings (server-defaults.test.ts names how they differ from the hosts'):
 * its cache already holds what the upstream generated for its proxy (sidecar or proxyless), so it is
 * served as is; nothing reads its local streams' status (their NACKs go upstream through the
 * machine); a response may be as large as a message the agent accepts from its upstream; the rest
 * are the defaults, not the control plane's EDGEPILOT_* (the agent reads none of them).
 */
export function agentXdsSettings(readMaxBytes: number): AdsXdsServerSettings {
  return { limits: { maxResponseBytes: readMaxBytes }, sidecarResources: false, proxyStatus: false };
}

/** Binds the local ports (and socket) and resolves once they serve; the upstream opens at the first local proxy. */
export async function startAgent(config: AgentConfig, options: AgentOptions): Promise<RunningAgent> {
  const { log } = options;
  const readMaxBytes = options.readMaxBytes ?? 16 * 1024 * 1024;
  // As the Node runtime: set versions hashed on this thread, so local streams take the sessions'
  // answers at once (an ACK, a push from memory) instead of a WebCrypto round trip per answer.
  useSyncSha256(nodeSha256);
  // The cache: what the upstream sent, under keys.resource, served by the server's own sessions.
  const store = createMemoryStore();
  const pushes = createChangeFeed((e) =>
    logWarn(log, `agent: a local stream failed a push: ${logSafe(String(e))}`),
  );
  const writes = createSerial();
  const shutdown = new AbortController();
  let pushVersion = 0;
  // Start-up errors name their variable: a CA bundle or cache directory the agent cannot use.
  const tls = upstreamTls(config.caFile, log);
  const identity = { namespace: config.namespace, upstream: config.upstream };
  const disk: CacheFile | undefined = config.cacheDir
    ? openCacheFile({ dir: config.cacheDir, identity, log, saveAfterMs: options.cacheSaveAfterMs })
    : undefined;
  // A loaded disk cache is last good configuration: served at once, sent upstream as
  // initial_resource_versions; it makes the agent ready but allows no removal (removalsAllowed).
  const restored = disk?.loaded !== undefined;
  if (disk?.loaded) await restoreCache(store, disk.loaded);
  const token = config.tokenFile
    ? watchTokenFile(config.tokenFile, () => dispatch({ type: "tokenChanged" }), log)
    : undefined;
  if (token && cleartextOffHost(config.upstream))
    logWarn(
      log,
      `agent: the token goes to ${config.upstream} over cleartext HTTP${config.http === "1.1" ? "/1.1" : "/2"}; use https:// off the host`,
    );
  const ctx = {
    backoff: options.backoff ?? { ...defaultBackoff, maxMs: 10_000 },
    random: Math.random,
    ackDelayMs: options.ackDelayMs ?? 1000,
    healthyStreamMs: 10_000,
    upstream: config.upstream,
    tokenSource: config.tokenFile ? `the token file ${logSafe(config.tokenFile)}` : "",
    ...(options.transport && { transport: options.transport }),
  };
  let state = initialAgentState(config.protocol, heldVersions(disk?.loaded));
  // The one place the transport is chosen: each opens the same UpstreamStream for the machine.
  const openers: Record<Transport, (h: UpstreamHandlers) => UpstreamStream> = {
    ads: (h) =>
      openUpstreamStream(
        {
          upstream: config.upstream,
          token: token?.current(),
          readMaxBytes,
          tls: tls.options(),
          caFile: config.caFile,
        },
        h,
      ),
    watch: (h) => openConnect("watch", h),
    poll: (h) => openConnect("poll", h),
  };
  const openConnect = (kind: "watch" | "poll", h: UpstreamHandlers) =>
    openConnectUpstream(
      {
        upstream: config.upstream,
        http: config.http ?? "2",
        kind,
        token: () => token?.current(),
        readMaxBytes,
        tls: tls.options(),
        caFile: config.caFile,
        ...options.transport,
      },
      h,
    );
  const received = { responses: 0, resources: 0 };
  let stream: UpstreamStream | undefined;
  let waitTimer: ReturnType<typeof setTimeout> | undefined;
  let ackTimer: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;

  function dispatch(input: AgentInput): void {
    const gated = !removalsAllowed(state);
    const [next, actions] = step(state, input, ctx);
    state = next;
    for (const a of actions) run(a);
    // The local sync gate opened (the upstream answered every type asked for): as the server does
    // when its gate opens, an unnamed push, after the cache writes, makes every local session
    // re-read what it held back (a SotW answer for a name missing until now, a removal).
    if (gated && removalsAllowed(state)) void writes(async () => pushes.emit({ version: ++pushVersion }));
  }
  function run(a: AgentAction): void {
    switch (a.do) {
      case "open": {
        stream?.close();
        const { op } = a;
        stream = openers[a.transport]({
          connected: () => dispatch({ type: "connected", op, now: Date.now() }),
          response: (res) => {
            received.responses++;
            received.resources += res.resources.length;
            dispatch(responseInput(op, res));
          },
          ended: (code, message) => dispatch({ type: "ended", op, now: Date.now(), code, message }),
        });
        return;
      }
      case "send":
        if (a.op === state.op) stream?.send(a.request);
        return;
      case "cache":
        void writes(() => cache(a.typeUrl as TypeUrl, a.upserts, a.removed)).catch((e: unknown) =>
          logError(log, `agent: cache write failed: ${logSafe(String(e))}`),
        );
        return;
      case "wait":
        clearTimeout(waitTimer);
        waitTimer = setTimeout(() => dispatch({ type: "timer", op: a.op }), a.ms);
        return;
      case "ackAt": {
        if (ackTimer && ackTimer.at <= a.at) return;
        if (ackTimer) clearTimeout(ackTimer.timer);
        const timer = setTimeout(
          () => {
            ackTimer = undefined;
            dispatch({ type: "tick", now: Date.now() });
          },
          Math.max(0, a.at - Date.now()),
        );
        ackTimer = { at: a.at, timer };
        return;
      }
      case "close":
        stream?.close();
        stream = undefined;
        return;
      case "log":
        log(a.line);
        return;
    }
  }

  /** Writes what a response changed into the cache, then pushes it to the local streams with its bytes. */
  async function cache(
    typeUrl: TypeUrl,
    upserts: { name: string; version: string; body: Uint8Array }[],
    removed: string[],
  ) {
    const changes: ResourceChange[] = [];
    for (const r of upserts) {
      const value: StoredResource = { typeUrl, name: r.name, version: r.version, body: r.body, service: "" };
      await store.put(keys.resource(typeUrl, r.name), value);
      changes.push(value);
    }
    for (const name of removed) {
      await store.delete(keys.resource(typeUrl, name));
      changes.push({ typeUrl, name, version: null });
    }
    pushes.emit({ version: ++pushVersion, changes });
    disk?.record(typeUrl, upserts, removed);
  }

  // The server's own read side over the cache; until the upstream answered every type asked for,
  // no local proxy is told to remove what it holds.
  const xds = createXdsServer(
    { store, feed: pushes, sync: { synced: () => removalsAllowed(state) } },
    { ...agentXdsSettings(readMaxBytes), log, shutdown: shutdown.signal },
  );
  const local = tapLocalStreams(xds.ads, {
    namespace: config.namespace,
    log,
    demand: (node, ask) => dispatch({ type: "demand", node, ...ask }),
    nack: (nack) => dispatch({ type: "nack", ...nack }),
  });
  // Local callers only (loopback, the pod's socket): a generous rate, no credentials; the node
  // check above is what scopes them, as the upstream's token scopes the agent.
  const admission = createAdmission({ ratePerSecond: 100 });
  const authenticate = async () => ({
    ok: true as const,
    identity: { method: "none" as const, subject: "local proxy" },
  });
  const notFound = (_req: unknown, res: import("node:http2").Http2ServerResponse) => {
    res.writeHead(404).end("edgepilot agent serves only ADS here\n");
  };
  const servers: Http2Server[] = [];
  const localServer = () => {
    const s = createH2cServer();
    serveAdsH2(s, { ads: local, admission, authenticate, readMaxBytes, log }, notFound);
    servers.push(s);
    return s;
  };
  const tcp = localServer();
  await listenOn(tcp, (s) => s.listen(config.port, "127.0.0.1"), {
    variable: "EDGEPILOT_AGENT_PORT",
    port: config.port,
    host: "127.0.0.1",
  });
  if (config.socket) {
    rmSync(config.socket, { force: true });
    const unix = localServer();
    const path = config.socket;
    await listenOn(unix, (s) => s.listen(path), { variable: "EDGEPILOT_AGENT_SOCKET", port: path });
  }
  // Workload certificates (SERVICE_ACCOUNT set): asked for at once, served on the SDS socket and OUTPUT_CERTS.
  const identityRunning = await startAgentIdentity(config, {
    log,
    upstreamToken: token,
    readMaxBytes,
    ...(options.certBackoff && { backoff: options.certBackoff }),
  });
  const readyServer = createHttpServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/ready") return void res.writeHead(404).end();
    const ok = state.ready || restored;
    res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" });
    const from = state.ready
      ? "ready\n"
      : "ready: serving the disk cache; the upstream has not answered yet\n";
    res.end(ok ? from : "not ready: no upstream configuration cached yet\n");
  });
  await listenOn(readyServer, (s) => s.listen(config.readyPort, config.readyHost ?? "127.0.0.1"), {
    variable: "EDGEPILOT_AGENT_READY_PORT",
    port: config.readyPort,
    host: config.readyHost ?? "127.0.0.1",
  });
  const port = (tcp.address() as AddressInfo).port;
  const readyAt = (config.readyHost ?? "127.0.0.1").includes(":")
    ? `[${config.readyHost}]`
    : (config.readyHost ?? "127.0.0.1");
  const readyPort = (readyServer.address() as AddressInfo).port;
  log(
    `agent: ADS on 127.0.0.1:${port}${config.socket ? ` and unix:${config.socket}` : ""}, ready on ` +
      `http://${readyAt}:${readyPort}/ready; upstream ${config.upstream} (opened at the first local proxy), namespace ${config.namespace}`,
  );
  return {
    port,
    readyPort,
    ready: () => state.ready || restored,
    upstreamStats: () => ({ ...received }),
    async stop() {
      dispatch({ type: "stop" });
      clearTimeout(waitTimer);
      if (ackTimer) clearTimeout(ackTimer.timer);
      token?.close();
      await identityRunning?.stop();
      shutdown.abort();
      // What the last responses cached reaches the disk before the process ends (SIGTERM).
      await writes(async () => undefined).catch(() => undefined);
      await disk?.flush();
      const closing = [...servers, readyServer].map((s) => new Promise<void>((r) => s.close(() => r())));
      readyServer.closeAllConnections();
      await Promise.race([Promise.all(closing), new Promise((r) => setTimeout(r, 2000))]);
      if (config.socket) rmSync(config.socket, { force: true });
    },
  };
}

/** An upstream response as the machine's input: resources with their encoded bytes, and removals. */
function responseInput(op: number, res: DeltaDiscoveryResponse): AgentInput {
  const resources = res.resources
    .filter((r) => r.resource !== undefined)
    .map((r) => ({ name: r.name, version: r.version, body: (r.resource?.value as Uint8Array).slice() }));
  return {
    type: "response",
    op,
    now: Date.now(),
    typeUrl: res.typeUrl,
    nonce: res.nonce,
    resources,
    removed: res.removedResources,
  };
}
