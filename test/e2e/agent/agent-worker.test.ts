/**
 * `edgepilot agent` over Connect: the real Worker on local workerd (wrangler's unstable_dev, once for
 * the file) as the upstream, reached over HTTP/1.1 (local workerd's dev server speaks no h2c) through
 * a TCP proxy that stands for what sits between in production (tcp-proxy.ts); the agent in this
 * process with EDGEPILOT_AGENT_UPSTREAM_PROTOCOL=watch; a real grpc-js-xds client through the
 * agent's Unix socket calling real gRPC backends. The Worker is restarted on the same persisted
 * state (a redeploy keeps a Durable Object's storage) while the client calls: no call lost, nothing
 * resent, no removal reaches a local proxy. The proxy then cuts idle streams (a CDN idle timeout):
 * the agent falls back to long-polled Poll and the client still follows a change. Last, the Watch
 * upstream to the Node runtime over h2c, where a local proxy's NACK reaches Node's log. ~15 s, most of it two workerd starts and a Node start.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { grpcBootstrap } from "../../../lib/agent/bootstrap.ts";
import type { AgentConfig } from "../../../lib/agent/config.ts";
import { callLoop } from "../restart/support.ts";
import { openAds } from "../support/ads-client.ts";
import { type Backend, startBackend } from "../support/backends.ts";
import { post, until } from "../support/converge.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { freePort, startControlPlane } from "../support/runtime.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { registerXdsPerChannel, type WhoClient, whoClient } from "../support/xds-client.ts";
import { CDS, eventually, resyncMesh, watchClusters } from "./support.ts";
import { type RunningWorker, startWorker, workerXdsToken } from "./worker.ts";

const ns = "default";
const nodeId = (pod: string) => `sidecar~127.0.0.9~${pod}.${ns}~${ns}.svc.cluster.local`;
const target = "xds:///reviews.default.svc.cluster.local:9080";
// Only the resync below syncs the Worker: until then (and after a restart, until its stored sync
// record is loaded) nothing may be removed.
const workerVars = { PILOT_SYNC_TIMEOUT: "5m" };

let dir: string;
let worker: RunningWorker;
let proxy: TcpProxy;
let backends: Backend[] = [];
let backendPort: number;
let agent: RunningAgent;
let client: WhoClient;
const lines: string[] = [];
const agentLog = () => lines.join("\n");
const log = (l: string) => lines.push(`${new Date().toISOString()} ${l}`);
const slice = (ip: string) =>
  endpointSlice("reviews-1", "reviews", ns, { name: "grpc", port: backendPort }, [{ ip, ready: true }]);
/** The converge helpers' view of the upstream: its ingest, and the agent's log on failure. */
const upstream = {
  output: () => `${worker.output()}\nagent log:\n${agentLog()}`,
  post: (events: unknown) => worker.post(events),
};
const bootstrapFor = (serverUri: string, podName: string) =>
  JSON.stringify(
    grpcBootstrap({
      generator: "grpc",
      podIp: "127.0.0.9",
      podName,
      namespace: ns,
      domainSuffix: "cluster.local",
      locality: { region: "e2e", zone: "a", subZone: "" },
      serverUri,
    }),
  );
const agentConfig = (upstreamUrl: string, o: Partial<AgentConfig>): AgentConfig => ({
  upstream: upstreamUrl,
  tokenFile: join(dir, "token"),
  namespace: ns,
  port: 0,
  socket: undefined,
  readyPort: 0,
  protocol: "watch",
  ...o,
});
// Short retries, and a long poll that ends well before the proxy's idle cut below.
const agentOptions = {
  log,
  backoff: { initialMs: 100, maxMs: 800 },
  transport: { watchMinLifeMs: 30_000, cutsBeforePoll: 3, watchRetryMs: 300_000, pollWaitMs: 300 },
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgepilot-agent-worker-"));
  writeFileSync(join(dir, "token"), `${workerXdsToken}\n`);
  backendPort = await freePort();
  backends = [
    await startBackend("a", "127.0.0.1", backendPort),
    await startBackend("b", "127.0.0.2", backendPort),
  ];
  worker = await startWorker(join(dir, "state"), workerVars);
  proxy = await startTcpProxy(worker.port);
  // The mesh as resyncs (endpoints before Services), which also syncs the Worker.
  await worker.resync("Pod", [pod("reviews", ns, "127.0.0.1"), pod("reviews", ns, "127.0.0.2")]);
  await worker.resync("EndpointSlice", [slice("127.0.0.1")]);
  await worker.resync("Service", [service("reviews", ns, [{ name: "grpc", port: 9080 }])]);
  const socket = join(dir, "agent.sock");
  agent = await startAgent(
    agentConfig(`http://127.0.0.1:${proxy.port}`, { socket, http: "1.1" }),
    agentOptions,
  );
  registerXdsPerChannel();
  client = whoClient(target, bootstrapFor(`unix:${socket}`, "e2e-client"));
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await proxy?.close();
  await worker?.stop();
  await Promise.all(backends.map((b) => b.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("edgepilot agent to the Worker over Connect", () => {
  it("serves a grpc-js-xds client from the Worker's Watch and follows an endpoint change", async () => {
    await until(upstream, client, Date.now(), { accept: (a) => a === "a", what: "backend a via the Worker" });
    expect(agentLog()).toMatch(/connecting \(Connect Watch\)/);
    const at = await post(upstream, event("MODIFIED", slice("127.0.0.2")));
    const ms = await until(upstream, client, at, {
      accept: (a) => a === "b",
      what: "backend b via the Worker",
    });
    console.log(
      `e2e agent/Worker: POST of a moved endpoint ▶ first call on it through the agent (Watch): ${ms}ms`,
    );
  });

  it("keeps every call through a Worker restart, is resent nothing, removes nothing", async () => {
    const watcher = watchClusters(agent.port, nodeId("watcher"));
    await eventually(() => watcher.held.size === 1, "watcher holds the cluster", agentLog, 20_000);
    const calls = callLoop(client, "b");
    await calls.until((s) => s.ok >= 5, "calls before the restart");
    const from = lines.length;
    await worker.stop();
    await eventually(
      () =>
        lines.slice(from).some((l) => /stream ended .* local proxies keep the cached configuration/.test(l)),
      "the cut Watch logged",
      agentLog,
      20_000,
    );
    proxy.target = undefined;
    // The same state directory: the Durable Object loads its mesh and its sync record.
    worker = await startWorker(join(dir, "state"), workerVars);
    const before = agent.upstreamStats();
    proxy.target = worker.port;
    // Every type's Watch answered again (CDS, EDS, LDS, RDS), with nothing: the cache is current.
    await eventually(
      () => agent.upstreamStats().responses - before.responses >= 4,
      "the Watches answered after the restart",
      agentLog,
      30_000,
    );
    expect(agent.upstreamStats().resources - before.resources).toBe(0);
    const at = await post(upstream, event("MODIFIED", slice("127.0.0.1")));
    await until(upstream, client, at, { accept: (a) => a === "a", what: "backend a after the restart" });
    const stats = calls.stop();
    console.log(
      `e2e agent/Worker: ${stats.ok + stats.failed + stats.others} calls through a Worker restart; lost ${stats.failed}`,
    );
    expect(stats.failed, `${stats.errors.join("\n")}\n${agentLog()}`).toBe(0);
    expect(watcher.removed).toEqual([]);
    expect(watcher.error()).toBe("");
    watcher.close();
  }, 60_000);

  it("falls back to long-polled Poll when something between cuts idle streams, and still follows a change", async () => {
    // A middlebox with a short idle timeout: an idle Watch is cut; a 300 ms long poll never idles
    // that long. 2 s leaves a loaded machine's Worker time to answer before the cut.
    proxy.idleCutMs = 2000;
    proxy.cutAll();
    await eventually(
      () => /falling back to long-polled Poll/.test(agentLog()),
      "the fallback to Poll",
      agentLog,
      30_000,
    );
    expect(agentLog()).toMatch(/Watch cut 3 time\(s\) in a row within 30s of connecting/);
    // The restart above was one cut already; at least one more came from the idle timeout.
    expect(proxy.idleCuts, agentLog()).toBeGreaterThanOrEqual(1);
    const at = await post(upstream, event("MODIFIED", slice("127.0.0.2")));
    const ms = await until(upstream, client, at, { accept: (a) => a === "b", what: "backend b over Poll" });
    console.log(
      `e2e agent/Worker: POST of a moved endpoint ▶ first call on it through the agent (Poll): ${ms}ms`,
    );
    proxy.idleCutMs = undefined;
  }, 60_000);
});

describe("edgepilot agent to the Node runtime over Connect", () => {
  it("serves a grpc-js-xds client from Watch over h2c on XDS_PORT and follows a change", async () => {
    const cp = await startControlPlane({
      XDS_AUTH: "token",
      EDGEPILOT_XDS_TOKEN: workerXdsToken,
      PILOT_DEBOUNCE_AFTER: "10ms",
    });
    const from = lines.length;
    const nodeAgent = await startAgent(
      agentConfig(`http://127.0.0.1:${cp.xdsPort}`, { http: "2" }),
      agentOptions,
    );
    const nodeClient = whoClient(target, bootstrapFor(`127.0.0.1:${nodeAgent.port}`, "e2e-node-client"));
    try {
      await resyncMesh(cp, { services: ["reviews"], reviewsIp: "127.0.0.1", backendPort });
      await until(cp, nodeClient, Date.now(), { accept: (a) => a === "a", what: "backend a via Node" });
      const at = await post(cp, event("MODIFIED", slice("127.0.0.2")));
      await until(cp, nodeClient, at, { accept: (a) => a === "b", what: "backend b via Node" });
      const mine = lines.slice(from).join("\n");
      expect(mine).toMatch(/connecting \(Connect Watch\)/);
      expect(mine).not.toMatch(/falling back/);

      // A local proxy's NACK rides the restarted CDS Watch (error_detail) to Node's proxy status.
      const ads = openAds(nodeAgent.port);
      try {
        ads.send({ node: { id: nodeId("nacker"), metadata: { GENERATOR: "grpc" } }, typeUrl: CDS });
        const first = await ads.next(5000);
        expect(first?.resources.length).toBe(1);
        ads.send({
          typeUrl: CDS,
          responseNonce: first?.nonce,
          errorDetail: { code: 3, message: "e2e: cluster rejected over Watch" },
        });
        await eventually(
          () => /NACKed .*over Poll\/Watch.*e2e: cluster rejected over Watch/.test(cp.output()),
          "upstream NACK log",
          () => `${cp.output()}\nagent log:\n${agentLog()}`,
        );
        expect(cp.output()).toContain(`${nodeId("nacker")}: e2e: cluster rejected over Watch`);
        expect(agentLog()).toMatch(/forwarded upstream: NACK of .* from local proxy/);
        expect(agentLog()).not.toMatch(/not forwarded/);
        // Once: the Watch restarted with it, and nothing NACKs again.
        expect(cp.output().match(/NACKed/g)).toHaveLength(1);
      } finally {
        ads.close();
      }
    } finally {
      nodeClient.close();
      await nodeAgent.stop();
      await cp.stop();
    }
  }, 60_000);
});
