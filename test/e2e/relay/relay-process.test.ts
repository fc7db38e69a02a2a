/**
 * `edgepilot relay` as a process (bin/edgepilot.mjs, as in the Deployment): configuration errors
 * name the variable and exit 2; SIGTERM stops the watches, flushes the queue and exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { named, names, svc } from "./harness.ts";
import { eventually, type Receiver, startReceiver } from "./receiver.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Runs `node bin/edgepilot.mjs relay` with only the given relay variables set. */
function run(env: Record<string, string>, args: string[] = []): Running {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(RELAY_|EDGEPILOT_|CLUSTER_ID$|KUBECONFIG$)/.test(k)),
  );
  const child = spawn(process.execPath, ["bin/edgepilot.mjs", "relay", ...args], {
    cwd: root,
    env: { ...base, HOME: mkdtempSync(join(tmpdir(), "relay-home-")), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  closers.push(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { child, output: () => out, exited };
}

async function setup(): Promise<{ api: FakeApiServer; rx: Receiver; env: Record<string, string> }> {
  const api = await startFakeApiServer();
  const rx = await startReceiver();
  closers.push(
    () => api.close(),
    () => rx.close(),
  );
  api.apply("namespaces", named("default"));
  api.apply("services", svc("reviews"));
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "relay-kube-")), "config");
  writeFileSync(kubeconfig, api.kubeconfigYaml());
  const env = {
    KUBECONFIG: kubeconfig,
    EDGEPILOT_URL: rx.url,
    EDGEPILOT_TOKEN: rx.token,
    CLUSTER_ID: "proc-1",
    RELAY_RESYNC_PERIOD: "0",
    RELAY_WATCH_ISTIO: "false",
    RELAY_LOG_EVENTS: "true",
  };
  return { api, rx, env };
}

describe("edgepilot relay (process)", () => {
  it("a bad setting exits 2 with a line naming the variable", async () => {
    const r = run({ EDGEPILOT_URL: "ftp://x", RELAY_BATCH_DELAY: "soon", CLUSTER_ID: "a/b" }, [
      "--max-queue=-1",
    ]);
    expect(await r.exited).toBe(2);
    const out = r.output();
    expect(out).toMatch(/EDGEPILOT_URL=ftp:\/\/x: must be http:\/\/ or https:\/\//);
    expect(out).toMatch(/RELAY_BATCH_DELAY=soon: not a duration/);
    expect(out).toMatch(/CLUSTER_ID=a\/b: a cluster id is/);
    expect(out).toMatch(/--max-queue=-1 \(RELAY_MAX_QUEUE\): not a whole number/);
  });

  it("SIGTERM flushes the queue at once (not after the batch delay) and exits 0", async () => {
    const { api, rx, env } = await setup();
    const r = run({ ...env, RELAY_BATCH_DELAY: "1h", RELAY_BATCH_SIZE: "1000" });
    await eventually("initial resyncs", () => rx.resyncs().length === 6, 20_000);
    await eventually("watches open", () => api.openWatches() === 6);
    api.apply("services", svc("a"));
    api.apply("services", svc("b"));
    await eventually("both events queued", () => /queued ADDED default\/b/.test(r.output()));
    expect(rx.events()).toEqual([]);
    const started = Date.now();
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(names(rx.events())).toEqual(["ADDED default/a", "ADDED default/b"]);
    expect(rx.requests.filter((q) => q.path === "/v1/events")).toHaveLength(1);
    expect(r.output()).toMatch(/SIGTERM: stopping watches and flushing the queue/);
    expect(r.output()).toMatch(/queue flushed/);
  });

  it("RELAY_HEALTH_PORT: /healthz 200, /ready 200 once every kind is listed (JSON)", async () => {
    const { rx, env } = await setup();
    const r = run({ ...env, RELAY_HEALTH_PORT: "0" });
    await eventually("health endpoint", () => /health on http:\/\/127\.0\.0\.1:\d+/.test(r.output()));
    const base = (/health on (http:\/\/127\.0\.0\.1:\d+)/.exec(r.output()) as RegExpExecArray)[1];
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await eventually("initial resyncs", () => rx.resyncs().length === 6, 20_000);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, stopping: false, waitingFor: [], kinds: 6 });
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it("a health port in use: one line naming RELAY_HEALTH_PORT, exit 2, nothing watched", async () => {
    const { api, env } = await setup();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => taken.close(resolve)));
    const port = (taken.address() as AddressInfo).port;
    const r = run({ ...env, RELAY_HEALTH_PORT: String(port) });
    expect(await r.exited).toBe(2);
    expect(r.output()).toContain(
      `relay: cannot start: RELAY_HEALTH_PORT=${port}: port ${port} on 127.0.0.1 is already in use by another process`,
    );
    expect(r.output()).not.toMatch(/\n\s+at /);
    expect(api.openWatches()).toBe(0);
  });

  it("SIGTERM with ingest down gives up after RELAY_SHUTDOWN_TIMEOUT and still exits 0", async () => {
    const { api, rx, env } = await setup();
    const r = run({ ...env, RELAY_SHUTDOWN_TIMEOUT: "300ms", RELAY_BATCH_DELAY: "10ms" });
    await eventually("initial resyncs", () => rx.resyncs().length === 6, 20_000);
    await eventually("watches open", () => api.openWatches() === 6);
    rx.failAll(503);
    api.apply("services", svc("a"));
    await eventually("a failed POST", () => rx.requests.some((q) => q.path === "/v1/events"));
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(0);
    expect(r.output()).toMatch(
      /1 events and 0 resyncs not delivered in time; the next relay's initial lists cover them/,
    );
  });
});
