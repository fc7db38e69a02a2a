/**
 * The relay notices a control-plane restart: the Node control plane is `kill -9`ed and restarted
 * on the same ports with an empty memory store; its ingest answers name a new instance, so the
 * relay relists and resyncs every kind within seconds, with the periodic resync turned off
 * (RELAY_RESYNC_PERIOD would otherwise be the only way back, up to 10 minutes later).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Relay } from "../../../functions/node/relay/relay.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { named, pod, relayToControlPlane, slice, svc } from "./harness.ts";

let cp: RunningControlPlane;
let api: FakeApiServer;
let relay: Relay;
const logs: string[] = [];
const env = { PILOT_DEBOUNCE_AFTER: "10ms", PILOT_SYNC_TIMEOUT: "5m" };

interface Ready {
  synced: boolean;
  published: boolean;
  instance: string;
  clusters: { cluster: string; synced: boolean }[];
}

async function ready(): Promise<Ready> {
  return (await (await fetch(`http://127.0.0.1:${cp.port}/ready`)).json()) as Ready;
}

async function untilSynced(what: string): Promise<Ready> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await ready();
    if (r.synced && r.published && r.clusters.some((c) => c.cluster === "relay-e2e" && c.synced)) return r;
    if (Date.now() > deadline)
      throw new Error(`${what}: never synced: ${JSON.stringify(r)}\n${logs.join("\n")}\n${cp.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  cp = await startControlPlane(env);
  api = await startFakeApiServer();
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.apply("services", svc("reviews"));
  api.apply("endpointslices", slice("reviews-1", "reviews", ["10.1.0.1"]));
  api.apply("pods", pod("reviews-v1", "10.1.0.1"));
  relay = relayToControlPlane(api, cp, logs, { heartbeatMs: 200 });
  relay.start();
});

afterAll(async () => {
  await relay?.stop(500);
  await api?.close();
  await cp?.stop();
});

describe("relay ▶ restarted control plane", () => {
  it("relists and resyncs every kind within seconds of a kill -9 and restart", async () => {
    const before = await untilSynced("first start");
    const resyncs = relay.stats().deliveredResyncs;
    expect(await cp.stop("SIGKILL")).toBe(null);
    cp = await startControlPlane(env, { port: cp.port, xdsPort: cp.xdsPort });
    const restartedAt = Date.now();
    // No "synced: false right after the restart" check: with a 200 ms heartbeat the relay may have
    // resynced the new process before the first /ready. That the new process started empty and was
    // synced by the relay is shown below: its own log says the cluster became synced, and the relay
    // delivered a resync of every kind after the restart.
    const after = await untilSynced("after the restart");
    const ms = Date.now() - restartedAt;
    console.log(`e2e relay: control plane restarted ▶ relay resynced it in ${ms}ms`);
    expect(after.instance).not.toBe(before.instance);
    expect(ms).toBeLessThan(5000);
    // Synced needs only Services and the endpoint kind; the other kinds' resyncs may still be in
    // flight when /ready says so, so wait for them (bounded) rather than race them.
    const deadline = Date.now() + 5000;
    while (relay.stats().deliveredResyncs - resyncs < 5 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(relay.stats().deliveredResyncs - resyncs).toBeGreaterThanOrEqual(5);
    expect(logs.join("\n")).toMatch(
      /state is new \(instance .*, was .*\).*relisting and resyncing every kind/,
    );
    expect(cp.output()).toMatch(/sync: cluster relay-e2e synced/);
  });
});
