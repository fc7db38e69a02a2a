/**
 * The relay against a fake API server over real HTTP: initial lists become resyncs, watch events
 * become ordered NDJSON batches, a dropped watch resumes from the last resourceVersion, and an
 * expired resourceVersion (410, as an event or as HTTP) leads to a relist and a resync.
 */
import { afterEach, describe, expect, it } from "vitest";
import { crdKinds } from "../../../lib/relay/kinds.ts";
import { coreKindNames, type Harness, named, names, pod, slice, startHarness, svc } from "./harness.ts";
import { eventually } from "./receiver.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const seed = (api: Harness["api"]) => {
  for (const n of ["default", "istio-system"]) api.apply("namespaces", named(n));
  api.apply("nodes", named("node-1"));
  for (const n of ["details", "ratings", "reviews"]) api.apply("services", svc(n));
  api.apply("endpointslices", slice("reviews-1", "reviews", ["10.1.0.1"]));
  api.apply("endpointslices", slice("ratings-1", "ratings", ["10.1.0.2"]));
  api.apply("pods", pod("reviews-v1", "10.1.0.1"));
};

describe("initial sync", () => {
  it("posts one resync per kind with every object, as listed, then watches from the list's resourceVersion", async () => {
    h = await startHarness({ watchEndpoints: true }, (api) => {
      seed(api);
      api.serveCrds(["v1"]);
      api.apply("virtualservices", {
        metadata: { name: "reviews", namespace: "default" },
        spec: { hosts: ["r"] },
      });
    });
    const { api, rx } = h;
    const istioKinds = crdKinds.filter((d) => d.group.endsWith(".istio.io")).map((d) => d.kind);
    await h.synced([...coreKindNames, "Endpoints", ...istioKinds]);

    const counts = Object.fromEntries(
      [...coreKindNames, "Endpoints", ...istioKinds].map((k) => [
        k,
        rx.resyncs(k).map((r) => r.list.items.length),
      ]),
    );
    expect(counts).toEqual({
      Namespace: [2],
      Node: [1],
      Service: [3],
      EndpointSlice: [2],
      Pod: [1],
      ConfigMap: [0],
      Endpoints: [0],
      ServiceEntry: [0],
      WorkloadEntry: [0],
      VirtualService: [1],
      DestinationRule: [0],
      Sidecar: [0],
      Gateway: [0],
      PeerAuthentication: [0],
      AuthorizationPolicy: [0],
    });
    // The Service list came in two pages (limit 2) and was posted whole, as the API server lists it.
    const pages = api.requests.filter((r) => r.path === "/api/v1/services" && r.query.watch === undefined);
    expect(pages.map((p) => [p.query.limit, p.query.continue !== undefined])).toEqual([
      ["2", false],
      ["2", true],
    ]);
    const [services] = rx.resyncs("Service");
    expect(services?.list).toMatchObject({ apiVersion: "v1", kind: "ServiceList" });
    expect(services?.list.metadata).toEqual({ resourceVersion: expect.any(String) });
    expect(services?.list.items.map((i) => i.metadata.name)).toEqual(["details", "ratings", "reviews"]);
    expect(services?.list.items[0]).not.toHaveProperty("kind");
    const vs = rx.resyncs("VirtualService")[0]?.list;
    expect(vs).toMatchObject({ apiVersion: "networking.istio.io/v1", items: [{ spec: { hosts: ["r"] } }] });

    const resync = rx.requests.find((r) => r.path === "/v1/resync" && r.kind === "Service");
    expect(resync).toMatchObject({ cluster: "test-1", authorization: `Bearer ${rx.token}` });
    // Each watch starts at its list's resourceVersion, with bookmarks.
    const watch = api.requests.find((r) => r.path === "/api/v1/services" && r.query.watch === "true");
    expect(watch?.query).toMatchObject({
      allowWatchBookmarks: "true",
      resourceVersion: services?.list.metadata.resourceVersion,
    });
    expect(rx.events()).toEqual([]);
  });

  it("without the Istio CRDs watches only the core kinds", async () => {
    h = await startHarness({}, seed);
    await h.synced();
    expect(h.relay.kinds().sort()).toEqual([...coreKindNames].sort());
    expect(h.rx.requests.filter((r) => r.path === "/v1/resync").map((r) => r.kind)).toHaveLength(6);
  });
});

describe("watch events", () => {
  it("are posted as NDJSON in the order they happened (per kind), batched", async () => {
    h = await startHarness({ batchDelayMs: 50 }, seed);
    await h.synced();
    const { api, rx } = h;
    api.apply("services", svc("productpage"));
    api.apply("pods", pod("productpage-v1", "10.1.0.9"));
    api.apply("services", svc("productpage", "default", 9081));
    api.remove("services", "default", "details");
    api.apply("endpointslices", slice("productpage-1", "productpage", ["10.1.0.9"]));
    await eventually("5 events", () => rx.events().length >= 5);
    // Each kind's events keep their order (one watch per kind, one queue, one POST at a time); kinds
    // come on separate watches, so how they interleave is up to the network, as with any informer.
    const ofKind = (k: string) => names(rx.events().filter((e) => e.object.kind === k));
    expect(ofKind("Service")).toEqual([
      "ADDED default/productpage",
      "MODIFIED default/productpage",
      "DELETED default/details",
    ]);
    expect(ofKind("Pod")).toEqual(["ADDED default/productpage-v1"]);
    expect(ofKind("EndpointSlice")).toEqual(["ADDED default/productpage-1"]);
    expect(rx.events()).toHaveLength(5);
    const posts = rx.requests.filter((r) => r.path === "/v1/events");
    expect(posts.length).toBeLessThan(5);
    expect(posts[0]).toMatchObject({ contentType: "application/x-ndjson", cluster: "test-1" });
    // Objects are passed on as the API server sent them on the watch.
    expect(rx.events().find((e) => e.type === "MODIFIED")?.object).toMatchObject({
      apiVersion: "v1",
      kind: "Service",
      spec: { ports: [{ port: 9081 }] },
    });
  });

  it("cut into batches of RELAY_BATCH_SIZE", async () => {
    h = await startHarness({ batchSize: 3, batchDelayMs: 10_000 }, seed);
    await h.synced();
    for (let i = 0; i < 6; i++) h.api.apply("pods", pod(`p${i}`, `10.2.0.${i}`));
    await eventually("6 events", () => h?.rx.events().length === 6);
    const sizes = h.rx.requests
      .filter((r) => r.path === "/v1/events")
      .map((r) => r.body.trim().split("\n").length);
    expect(sizes).toEqual([3, 3]);
    expect(names(h.rx.events())).toEqual([0, 1, 2, 3, 4, 5].map((i) => `ADDED default/p${i}`));
  });
});

describe("a dropped watch", () => {
  it("resumes from the last resourceVersion seen, with no duplicate and no gap", async () => {
    h = await startHarness({}, seed);
    await h.synced();
    const { api, rx } = h;
    api.apply("services", svc("a"));
    await eventually("event a", () => rx.events().length === 1);
    const lastSeen = String(api.store.rv);
    api.holdWatches();
    expect(api.dropWatches("services")).toBe(1);
    await eventually("the relay to watch services again", () => api.heldWatches() >= 1);
    // Changes while no watch is open: the new watch must replay exactly these.
    api.apply("services", svc("b"));
    api.remove("services", "default", "a");
    api.releaseWatches();
    await eventually("3 events", () => rx.events().length >= 3);
    expect(names(rx.events())).toEqual(["ADDED default/a", "ADDED default/b", "DELETED default/a"]);
    const watches = api.requests.filter((r) => r.path === "/api/v1/services" && r.query.watch === "true");
    expect(watches.at(-1)?.query.resourceVersion).toBe(lastSeen);
    expect(rx.resyncs("Service")).toHaveLength(1);
  });

  it("resumes from a bookmark's resourceVersion", async () => {
    h = await startHarness({}, seed);
    await h.synced();
    const { api } = h;
    api.apply("pods", pod("other", "10.3.0.1")); // moves the global resourceVersion past the services watch
    api.bookmark("services");
    const bookmarked = String(api.store.rv);
    await eventually("the pod event", () => h?.rx.events().length === 1);
    api.dropWatches("services");
    const resumed = await eventually("a new services watch", () =>
      api.requests.filter((r) => r.path === "/api/v1/services" && r.query.watch === "true").at(1),
    );
    expect(resumed.query.resourceVersion).toBe(bookmarked);
  });
});

describe("an expired resourceVersion", () => {
  for (const expiredAs of ["event", "http"] as const) {
    it(`(410 as ${expiredAs === "event" ? "an ERROR event" : "HTTP 410"}) leads to a relist and a resync`, async () => {
      h = await startHarness({}, seed);
      await h.synced();
      const { api, rx } = h;
      api.expiredAs = expiredAs;
      api.holdWatches();
      api.dropWatches("services");
      await eventually("the relay to watch services again", () => api.heldWatches() >= 1);
      api.apply("services", svc("new"));
      api.remove("services", "default", "details");
      api.compact();
      api.releaseWatches();
      const second = await eventually("a second Service resync", () => rx.resyncs("Service")[1]);
      expect(second.list.items.map((i) => i.metadata.name)).toEqual(["new", "ratings", "reviews"]);
      // What happened while the watch was away came with the list, not as events.
      expect(rx.events()).toEqual([]);
      expect(h.logs.join("\n")).toMatch(/Service: .*(expired|410 Gone).*relisting/);
      // ...and watching goes on from the new list.
      api.apply("services", svc("after"));
      await eventually("the event after the relist", () => rx.events().length === 1);
      expect(names(rx.events())).toEqual(["ADDED default/after"]);
    });
  }

  it("on an open watch (ERROR 410 mid-stream) leads to a relist and a resync", async () => {
    h = await startHarness({}, seed);
    await h.synced();
    h.api.expireWatches("pods");
    await eventually("a second Pod resync", () => h?.rx.resyncs("Pod")[1]);
    expect(h.rx.resyncs("Service")).toHaveLength(1);
  });

  it("of a continue token during a paged list restarts the list", async () => {
    h = await startHarness({}, (api) => {
      seed(api);
      api.failNext("continue=", 410);
    });
    await h.synced();
    expect(h.rx.resyncs("Service").map((r) => r.list.items.length)).toEqual([3]);
    expect(h.logs.join("\n")).toMatch(/Service: list failed: 410/);
  });
});
