/**
 * The agent's disk cache and its TLS upstream, end to end, against one real Node edgepilot (child
 * process): through a TLS forwarder with a throwaway CA (openssl), the agent trusting that CA serves
 * a local proxy, and one trusting another CA says why it cannot connect and retries without failing;
 * an agent restarted while the upstream is unreachable serves its disk cache at once, is ready, and
 * when the upstream is back sends initial_resource_versions from the file, so nothing is resent and
 * nothing removed. ~4s: one control-plane start.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentOptions, type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import type { AgentConfig } from "../../../lib/agent/config.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import {
  type Forwarder,
  issueServerCert,
  makeTestCa,
  opensslMissing,
  tcpForwarder,
  tlsForwarder,
} from "../support/tls.ts";
import { eventually, resyncMesh, watchClusters } from "./support.ts";

const nodeId = (pod: string) => `sidecar~127.0.0.9~${pod}.default~default.svc.cluster.local`;
let cp: RunningControlPlane;
let dir: string;
const agents: RunningAgent[] = [];
const forwarders: Forwarder[] = [];

/** An agent on free ports, logging into `lines`; fast retries. */
async function agent(
  config: Partial<AgentConfig> & { upstream: string },
  lines: string[],
  extra: Partial<AgentOptions> = {},
) {
  const a = await startAgent(
    { tokenFile: undefined, namespace: "default", port: 0, socket: undefined, readyPort: 0, ...config },
    { log: (l) => lines.push(l), backoff: { initialMs: 50, maxMs: 200 }, ackDelayMs: 20, ...extra },
  );
  agents.push(a);
  return a;
}
const readyOf = (a: RunningAgent) =>
  fetch(`http://127.0.0.1:${a.readyPort}/ready`).then(async (r) => ({
    status: r.status,
    body: await r.text(),
  }));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgepilot-agent-ops-"));
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  await resyncMesh(cp, { services: ["reviews", "ratings"], reviewsIp: "127.0.0.1", backendPort: 9080 });
});

afterAll(async () => {
  // In parallel: a stop waits up to 2s for local connections to go.
  await Promise.all([...agents.map((a) => a.stop()), ...forwarders.map((f) => f.close())]);
  await cp?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(opensslMissing !== "")(`edgepilot agent over TLS ${opensslMissing}`, () => {
  let upstream: string;
  beforeAll(async () => {
    const ca = makeTestCa(dir, "edgepilot-test-ca");
    const tls = await tlsForwarder(cp.xdsPort, issueServerCert(ca, dir));
    forwarders.push(tls);
    upstream = `https://127.0.0.1:${tls.port}`;
  });

  it("trusting the upstream's CA (EDGEPILOT_AGENT_CA_FILE), serves a local proxy", async () => {
    const lines: string[] = [];
    const a = await agent({ upstream, caFile: join(dir, "edgepilot-test-ca.pem") }, lines);
    const w = watchClusters(a.port, nodeId("tls-client"));
    await eventually(
      () => w.held.size === 2,
      "both clusters through the TLS upstream",
      () => lines.join("\n"),
    );
    expect(lines.join("\n")).toMatch(/upstream https:\/\/127\.0\.0\.1:\d+: connected/);
    w.close();
  });

  it("trusting another CA, says the certificate is not trusted and retries, without failing", async () => {
    makeTestCa(dir, "another-ca");
    const lines: string[] = [];
    const a = await agent({ upstream, caFile: join(dir, "another-ca.pem") }, lines);
    const w = watchClusters(a.port, nodeId("tls-refused"));
    await eventually(
      () => /\(2 failed attempts\)/.test(lines.join("\n")),
      "a retry",
      () => lines.join("\n"),
    );
    expect(lines.join("\n")).toMatch(
      /stream ended \(unavailable: "TLS: the upstream's certificate is not trusted \([A-Z_]+: .*\); it must chain to EDGEPILOT_AGENT_CA_FILE \(.*another-ca\.pem\)"\).*retrying in \d+ms/,
    );
    expect((await readyOf(a)).status).toBe(503);
    expect(w.error()).toBe("");
    w.close();
  });

  it("refuses to start on a CA file it cannot use, naming the variable", async () => {
    await expect(agent({ upstream, caFile: join(dir, "missing.pem") }, [])).rejects.toThrow(
      /EDGEPILOT_AGENT_CA_FILE=".*missing\.pem": cannot use it: "ENOENT"/,
    );
    writeFileSync(join(dir, "not-pem.pem"), "hello\n");
    await expect(agent({ upstream, caFile: join(dir, "not-pem.pem") }, [])).rejects.toThrow(
      /EDGEPILOT_AGENT_CA_FILE=.*: cannot use it: "no PEM certificate/,
    );
  });
});

describe("edgepilot agent with a disk cache (EDGEPILOT_AGENT_CACHE_DIR)", () => {
  it("restarted while the upstream is unreachable, serves the cache at once, then resends and removes nothing", async () => {
    const cacheDir = mkdtempSync(join(dir, "cache-"));
    const port = await freePort();
    let link = await tcpForwarder(cp.xdsPort, port);
    const upstream = `http://127.0.0.1:${port}`;
    const first: string[] = [];
    const a = await agent({ upstream, cacheDir }, first, { cacheSaveAfterMs: 20 });
    const w = watchClusters(a.port, nodeId("first"));
    await eventually(
      () => w.held.size === 2,
      "first agent holds both clusters",
      () => first.join("\n"),
    );
    w.close();
    await a.stop(); // SIGTERM's path: what is cached reaches the disk
    agents.splice(agents.indexOf(a), 1);
    await link.close(); // the upstream is unreachable from here on

    const lines: string[] = [];
    const b = await agent({ upstream, cacheDir }, lines);
    expect(lines.join("\n")).toMatch(/cache file .*: loaded \d+ resources saved at/);
    expect(await readyOf(b)).toEqual({
      status: 200,
      body: "ready: serving the disk cache; the upstream has not answered yet\n",
    });
    const late = watchClusters(b.port, nodeId("late"));
    await eventually(
      () => late.held.size === 2,
      "the cached clusters, upstream away",
      () => lines.join("\n"),
      2000,
    );
    expect(b.upstreamStats().responses).toBe(0);
    await eventually(
      () => /stream ended/.test(lines.join("\n")),
      "upstream unreachable",
      () => lines.join("\n"),
    );

    link = await tcpForwarder(cp.xdsPort, port);
    forwarders.push(link);
    await eventually(
      () => /: connected$/m.test(lines.join("\n")),
      "reconnected",
      () => lines.join("\n"),
    );
    await new Promise((r) => setTimeout(r, 300));
    console.log(
      `e2e agent disk cache: after reconnecting, upstream sent ${JSON.stringify(b.upstreamStats())}`,
    );
    expect(b.upstreamStats().resources).toBe(0);
    expect(late.removed).toEqual([]);
    expect(late.held.size).toBe(2);
    late.close();
  });
});
