/**
 * The ingest app's side of start-up sync (functions/ingest.ts): accepted calls mark their cluster
 * heard from and resyncs mark its kinds, refused ones change nothing; every answer past the token
 * check names the instance; /ready stays 200 and says how far sync got.
 */
import { describe, expect, it } from "vitest";
import { createIngestApp } from "../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import { createSyncTracker } from "../../../lib/push/sync-tracker.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createManualClock } from "../relay/manual-clock.ts";

async function setup() {
  const store = createMemoryStore();
  const clock = createManualClock();
  const sync = createSyncTracker({
    store,
    options: { timeoutMs: 60_000, useEndpointSlice: true },
    timers: clock,
    log: () => undefined,
    cached: true,
    newId: () => "state-1",
  });
  await sync.start();
  const app = createIngestApp({
    store,
    registry: defaultRegistryOptions,
    now: () => clock.now(),
    token: "t",
    clusterId: "Kubernetes",
    allowUnauthenticated: () => false,
    sync,
    log: () => undefined,
  });
  const post = (path: string, body: string, token = "t") =>
    app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
  const ready = async () =>
    (await (await app.request("/ready")).json()) as {
      synced: boolean;
      clusters: { cluster: string; synced: boolean }[];
    };
  return { app, post, ready };
}

const emptyList = (kind: string) =>
  JSON.stringify({ kind: `${kind}List`, metadata: { resourceVersion: "1" }, items: [] });

describe("ingest and start-up sync", () => {
  it("marks accepted calls and resyncs, never refused ones; names the instance past the token check", async () => {
    const h = await setup();
    expect(await h.ready()).toMatchObject({ ready: true, synced: false, published: false, clusters: [] });

    const refused = await h.post("/v1/events?cluster=east", "{");
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-edgepilot-instance")).toBe("state-1");
    const unauthenticated = await h.post("/v1/events?cluster=east", "[]", "wrong");
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.has("x-edgepilot-instance")).toBe(false);
    expect((await h.ready()).clusters).toEqual([]);

    const empty = await h.post("/v1/events?cluster=east", "[]");
    expect(empty.status).toBe(200);
    expect(await empty.json()).toMatchObject({ instance: "state-1" });
    expect((await h.ready()).clusters).toEqual([
      { cluster: "east", services: false, endpoints: false, synced: false, pods: false },
    ]);

    expect((await h.post("/v1/resync?cluster=east&kind=Service", emptyList("Service"))).status).toBe(200);
    expect((await h.post("/v1/resync?cluster=east&kind=EndpointSlice", "{")).status).toBe(400);
    expect((await h.ready()).synced).toBe(false);
    const slices = await h.post("/v1/resync?cluster=east&kind=EndpointSlice", emptyList("EndpointSlice"));
    expect(slices.status).toBe(200);
    expect(await h.ready()).toMatchObject({
      synced: true,
      published: false,
      instance: "state-1",
      clusters: [{ cluster: "east", services: true, endpoints: true, synced: true, pods: false }],
    });
    // The Pod resync is shown beside them (it holds assignments, never "synced": lib/push/held-pods.ts).
    expect((await h.post("/v1/resync?cluster=east&kind=Pod", emptyList("Pod"))).status).toBe(200);
    expect((await h.ready()).clusters).toEqual([
      { cluster: "east", services: true, endpoints: true, synced: true, pods: true },
    ]);
  });
});
