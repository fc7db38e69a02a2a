/**
 * `edgepilot agent` end to end: a real Node edgepilot (child process) as the upstream, the agent in
 * this process, a real grpc-js-xds client through the agent's Unix socket calling real gRPC backends
 * on 127.0.0.x, raw ADS clients on the agent's loopback port. The upstream is killed and restarted
 * (with a new token, first refused) while the client keeps calling: no call fails, and no removal
 * reaches a local proxy. Takes ~8s: two control-plane starts are the point of it.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { grpcBootstrap } from "../../../lib/agent/bootstrap.ts";
import { callLoop } from "../restart/support.ts";
import { openAds } from "../support/ads-client.ts";
import { type Backend, startBackend } from "../support/backends.ts";
import { post, until } from "../support/converge.ts";
import { endpointSlice, event, service } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { registerXdsPerChannel, type WhoClient, whoClient } from "../support/xds-client.ts";
import { CDS, eventually, resyncMesh, watchClusters } from "./support.ts";

const ns = "default";
const nodeId = (pod: string, namespace = ns) =>
  `sidecar~127.0.0.9~${pod}.${namespace}~${namespace}.svc.cluster.local`;
const tokens = { a: "agent-e2e-token-aaaa", b: "agent-e2e-token-bbbb", c: "agent-e2e-token-cccc" };
// Only a resync syncs a restarted upstream within the test: before it, nothing may be removed.
const env = (token: string) => ({
  PILOT_SYNC_TIMEOUT: "5m",
  PILOT_DEBOUNCE_AFTER: "10ms",
  XDS_AUTH: "token",
  EDGEPILOT_XDS_TOKEN: token,
});

let cp: RunningControlPlane;
let backends: Backend[] = [];
let backendPort: number;
let agent: RunningAgent;
let client: WhoClient;
let dir: string;
const lines: string[] = [];
const agentLog = () => lines.join("\n");
const tokenFile = () => join(dir, "token");
/** Rewrites the token file as kubelet does: a new file renamed over the old one. */
const writeToken = (token: string) => {
  writeFileSync(join(dir, "token.tmp"), `${token}\n`);
  renameSync(join(dir, "token.tmp"), tokenFile());
};
const ready = () => fetch(`http://127.0.0.1:${agent.readyPort}/ready`).then((r) => r.status);
const slice = (ip: string) =>
  endpointSlice("reviews-1", "reviews", ns, { name: "grpc", port: backendPort }, [{ ip, ready: true }]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgepilot-agent-"));
  backendPort = await freePort();
  backends = [
    await startBackend("a", "127.0.0.1", backendPort),
    await startBackend("b", "127.0.0.2", backendPort),
  ];
  cp = await startControlPlane(env(tokens.a));
  await resyncMesh(cp, { services: ["reviews"], reviewsIp: "127.0.0.1", backendPort });
  writeToken(tokens.a);
  const socket = join(dir, "agent.sock");
  agent = await startAgent(
    {
      upstream: `http://127.0.0.1:${cp.xdsPort}`,
      tokenFile: tokenFile(),
      namespace: ns,
      port: 0,
      socket,
      readyPort: 0,
    },
    { log: (l) => lines.push(`${new Date().toISOString()} ${l}`), backoff: { initialMs: 100, maxMs: 800 } },
  );
  registerXdsPerChannel();
  // The bootstrap `edgepilot agent bootstrap --generator grpc` prints for this pod.
  const bootstrap = JSON.stringify(
    grpcBootstrap({
      generator: "grpc",
      podIp: "127.0.0.9",
      podName: "e2e-client",
      namespace: ns,
      domainSuffix: "cluster.local",
      locality: { region: "e2e", zone: "a", subZone: "" },
      serverUri: `unix:${socket}`,
    }),
  );
  client = whoClient("xds:///reviews.default.svc.cluster.local:9080", bootstrap);
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("edgepilot agent", () => {
  it("is not ready before its first upstream answer; serves a grpc-js-xds client over its Unix socket", async () => {
    expect(await ready()).toBe(503);
    await until(cp, client, Date.now(), { accept: (a) => a === "a", what: "backend a through the agent" });
    expect(await ready()).toBe(200);
    expect(agentLog()).toMatch(/upstream http:\/\/127\.0\.0\.1:\d+: connected/);
    expect(agentLog()).toMatch(/first configuration cached; ready/);
  });

  it("follows an endpoint change", async () => {
    const at = await post(cp, event("MODIFIED", slice("127.0.0.2")));
    const ms = await until(cp, client, at, { accept: (a) => a === "b", what: "backend b through the agent" });
    console.log(`e2e agent: POST of a moved endpoint ▶ first call on it through the agent: ${ms}ms`);
  });

  it("refuses a local proxy whose node claims another namespace, saying why", async () => {
    const ads = openAds(agent.port);
    ads.send({ node: { id: nodeId("intruder", "other") }, typeUrl: CDS });
    expect(await ads.next(2000)).toBeUndefined();
    expect(ads.error()).toMatch(/permission_denied/);
    expect(ads.error()).toMatch(
      /claims namespace \\?"other\\?".*serves the proxies of namespace \\?"default\\?"/,
    );
    ads.close();
  });

  it("forwards a local proxy's NACK upstream, where the proxy status records it", async () => {
    const ads = openAds(agent.port);
    ads.send({ node: { id: nodeId("nacker"), metadata: { GENERATOR: "grpc" } }, typeUrl: CDS });
    const first = await ads.next(3000);
    expect(first?.resources.length).toBe(1);
    ads.send({ typeUrl: CDS, versionInfo: first?.versionInfo, responseNonce: first?.nonce });
    // A new cluster upstream: the agent's CDS response awaits its ACK while this proxy rejects it.
    await post(cp, event("ADDED", service("ratings", ns, [{ name: "grpc", port: 9080 }])));
    const pushed = await ads.next(5000);
    expect(pushed?.resources.length).toBe(2);
    ads.send({
      typeUrl: CDS,
      versionInfo: first?.versionInfo,
      responseNonce: pushed?.nonce,
      errorDetail: { code: 3, message: "e2e: cluster rejected" },
    });
    await eventually(
      () => /NACKed .*e2e: cluster rejected/.test(cp.output()),
      "upstream NACK log",
      cp.output,
    );
    expect(cp.output()).toContain(`${nodeId("nacker")}: e2e: cluster rejected`);
    expect(agentLog()).toMatch(/forwarded upstream: NACK of .* from local proxy/);
    ads.close();
  });

  it("keeps serving through a token rotation, an upstream restart and a refused token, removing nothing", async () => {
    const watcher = watchClusters(agent.port, nodeId("watcher"));
    await eventually(() => watcher.held.size === 2, "watcher holds both clusters", agentLog);
    const calls = callLoop(client, "b");
    await calls.until((s) => s.ok >= 5, "calls before the restart");

    // A rotated token is picked up without touching the open streams.
    writeToken(tokens.b);
    await eventually(() => /token file .* changed/.test(agentLog()), "token change noticed", agentLog);

    // The upstream dies; local proxies keep what they have, and a new one is answered from the cache.
    const ports = { port: cp.port, xdsPort: cp.xdsPort };
    await cp.stop("SIGKILL");
    await eventually(
      () => /stream ended .* local proxies keep the cached configuration/.test(agentLog()),
      "stream end logged",
      agentLog,
    );
    const late = openAds(agent.port);
    late.send({ node: { id: nodeId("late"), metadata: { GENERATOR: "grpc" } }, typeUrl: CDS });
    expect((await late.next(1000))?.resources.length).toBe(2);
    late.close();

    // Restarted with another token: the agent's is refused, said clearly, and retried.
    cp = await startControlPlane(env(tokens.c), ports);
    await eventually(
      () => /refused the token \(UNAUTHENTICATED/.test(agentLog()),
      "refusal logged",
      agentLog,
    );
    writeToken(tokens.c);
    const from = lines.length;
    await eventually(
      () => lines.slice(from).some((l) => l.endsWith(": connected with the new token")),
      "reconnected",
      agentLog,
    );
    // The same mesh resynced: the upstream is synced, holds what the agent holds, resends nothing.
    const before = agent.upstreamStats();
    await resyncMesh(cp, { services: ["reviews", "ratings"], reviewsIp: "127.0.0.2", backendPort });
    await new Promise((r) => setTimeout(r, 300));
    expect(agent.upstreamStats().resources - before.resources).toBe(0);
    const at = await post(cp, event("MODIFIED", slice("127.0.0.1")));
    await until(cp, client, at, { accept: (a) => a === "a", what: "backend a after the restart" });

    const stats = calls.stop();
    console.log(
      `e2e agent: ${stats.ok + stats.failed} calls through token rotation, kill -9, refused token, restart; ` +
        `lost ${stats.failed}; upstream log:\n${lines.filter((l) => l.includes("upstream")).join("\n")}`,
    );
    expect(stats.failed, `${stats.errors.join("\n")}\n${cp.output()}\n${agentLog()}`).toBe(0);
    expect(stats.ok).toBeGreaterThan(10);
    expect(watcher.removed).toEqual([]);
    expect(watcher.error()).toBe("");
    expect(watcher.held.size).toBe(2);
    watcher.close();
  });
});
