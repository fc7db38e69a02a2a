/**
 * The Worker keeps its state and its start-up sync across a restart of the Durable Object.
 * @cloudflare/vitest-plugin cannot restart an object, so the most honest stand-in is used: what a
 * restarted MeshStore runs at construction (createSqlStore over the object's storage, a new sync
 * tracker) is run again inside the object, over the same SQLite storage, with a long
 * PILOT_SYNC_TIMEOUT so only the loaded record can make it synced. It loads the same instance id,
 * synced and published at once, and the same published resources; a MeshStore with no state
 * (a new id) starts unsynced with a new instance id.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { forwardedIdentityHeader } from "../../functions/auth.ts";
import { workerConfig } from "../../functions/workers/config.ts";
import { createPollHost, meshStoreXdsSettings } from "../../functions/workers/poll-host.ts";
import { createChangeFeed } from "../../lib/core/change-feed.ts";
import { createSyncTracker } from "../../lib/push/sync-tracker.ts";
import { keys } from "../../lib/store/keys.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import type { Store } from "../../lib/store/store.ts";
import { createXdsServer } from "../../lib/xds/server.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { endpointSlice, pod, service } from "../e2e/support/kube.ts";
import {
  connectJson,
  freezeClock,
  mesh,
  origin,
  runAlarmsUntilIdle,
  TypeUrl,
  testToken,
  worker,
} from "./support.ts";

const reviews = "outbound|9080||reviews.default.svc.cluster.local";

async function resync(kind: string, items: unknown[]): Promise<Response> {
  return worker(`/v1/resync?cluster=east&kind=${kind}`, {
    method: "POST",
    headers: { authorization: `Bearer ${testToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "v1",
      kind: `${kind}List`,
      metadata: { resourceVersion: "9" },
      items,
    }),
  });
}

/** What a restarted MeshStore builds over `store`: a tracker with a 5 minute timeout, started. */
function restartedTracker(store: Store) {
  const lines: string[] = [];
  const tracker = createSyncTracker({
    store,
    options: { timeoutMs: 300_000, useEndpointSlice: true },
    timers: { now: () => Date.now(), setTimeout: () => undefined, clearTimeout: () => undefined },
    log: (l) => lines.push(l),
    cached: true,
  });
  return { tracker, lines };
}

let instance: string;

beforeAll(async () => {
  freezeClock();
  const port = { name: "grpc", port: 9080 };
  const answers = [
    await resync("Pod", [pod("reviews", "default", "10.1.0.1")]),
    await resync("Service", [service("reviews", "default", [port])]),
    await resync("EndpointSlice", [
      endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }]),
    ]),
  ];
  for (const a of answers) expect(a.status, await a.clone().text()).toBe(200);
  const ids = await Promise.all(
    answers.map(async (a) => [
      a.headers.get("x-edgepilot-instance"),
      ((await a.json()) as { instance: string }).instance,
    ]),
  );
  instance = ids[0]?.[0] as string;
  expect(instance).toMatch(/^[0-9a-f-]{36}$/);
  expect(ids.flat()).toEqual([instance, instance, instance, instance, instance, instance]);
  await runAlarmsUntilIdle();
});

describe("the Worker across a Durable Object restart", () => {
  it("shows the sync in /ready: the cluster synced, the registry published", async () => {
    const ready = await (await worker("/ready")).json();
    expect(ready).toMatchObject({
      ready: true,
      synced: true,
      published: true,
      instance,
      clusters: [{ cluster: "east", services: true, endpoints: true, synced: true, pods: true }],
    });
    const status = await connectJson("edgepilot.v1.StatusService/GetStatus", {});
    expect(status.sync).toMatchObject({
      synced: true,
      published: true,
      instance,
      clusters: [{ cluster: "east", services: true, endpoints: true, synced: true, pods: true }],
    });
  });

  it("a fresh store and tracker over the object's storage load the same state, synced at once", async () => {
    const loaded = await runInDurableObject(mesh(), async (_object, state) => {
      const store = createSqlStore(state.storage.sql);
      const { tracker, lines } = restartedTracker(store);
      const sync = await tracker.start();
      const clusters = await createStoreSource(store).list(TypeUrl.cluster);
      return { sync, gate: await tracker.synced(), lines, clusters: clusters.map((c) => c.name) };
    });
    expect(loaded.sync).toMatchObject({ synced: true, published: true, timedOut: false, instance });
    expect(loaded.gate).toBe(true);
    expect(loaded.clusters).toContain(reviews);
    expect(loaded.lines).toContain("sync: registry synced (1 cluster(s))");
  });

  it("a MeshStore with no state starts unsynced, with a new instance id", async () => {
    const fresh = env.MESH.get(env.MESH.newUniqueId());
    const sync = await runInDurableObject(fresh, async (object) => {
      const { tracker } = restartedTracker(object.store);
      return { state: await tracker.start(), gate: await tracker.synced() };
    });
    expect(sync.state).toMatchObject({ synced: false, published: false, clusters: [] });
    expect(sync.state.instance).not.toBe(instance);
    expect(sync.gate).toBe(false);
  });
});

describe("a MeshStore restarted after a batch was cut off mid-commit", () => {
  it("begins a new state lifetime at its first call: a new instance id, the marker gone", async () => {
    const fresh = env.MESH.get(env.MESH.newUniqueId());
    // What the object left when it died: a state, and the marker of a commit it did not finish.
    const old = await runInDurableObject(fresh, async (object) => {
      const state = await restartedTracker(object.store).tracker.start();
      await object.store.put(keys.commitMarker(), { at: Date.now(), writes: 42 });
      return state.instance;
    });
    // Its first call since: /ready, as the Worker forwards it (ingest would find the same).
    const ready = (await (await fresh.fetch(new Request(`${origin}/ready`))).json()) as { instance: string };
    expect(ready.instance).toMatch(/^[0-9a-f-]{36}$/);
    expect(ready.instance).not.toBe(old);
    expect(
      await runInDurableObject(fresh, (object) => object.store.get(keys.commitMarker())),
    ).toBeUndefined();
  });
});

describe("the Durable Object's poll host while not synced", () => {
  it("tells a Poll client holding a gone name nothing until the gate opens", async () => {
    const fresh = env.MESH.get(env.MESH.newUniqueId());
    const removed = await runInDurableObject(fresh, async (object) => {
      let open = false;
      const config = workerConfig(env);
      const core = { store: object.store, feed: createChangeFeed(() => {}), sync: { synced: () => open } };
      const server = createXdsServer(core, { ...meshStoreXdsSettings(config), log: () => {} });
      const host = createPollHost(server.poll, config.limits, () => {});
      const poll = async () => {
        const res = await host.fetch(
          new Request("https://mesh/edgepilot.xds.v1.DeltaPollService/Poll", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "connect-protocol-version": "1",
              // What the Worker adds once it verified the caller (poll-forward.ts).
              [forwardedIdentityHeader]: JSON.stringify({ method: "token", subject: "EDGEPILOT_XDS_TOKEN" }),
            },
            body: JSON.stringify({
              request: { typeUrl: TypeUrl.cluster, initialResourceVersions: { gone: "v1" } },
            }),
          }),
        );
        expect(res.status, await res.clone().text()).toBe(200);
        return ((await res.json()) as { removedResources?: string[] }).removedResources ?? [];
      };
      const before = await poll();
      open = true;
      return { before, after: await poll() };
    });
    expect(removed).toEqual({ before: [], after: ["gone"] });
  });
});
