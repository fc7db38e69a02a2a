/**
 * The relay's delivery and housekeeping over real HTTP: ingest failures are retried without loss or
 * reordering, a rejected event is skipped loudly, the periodic resync relists, the queue limit stops
 * the watches until it drains, and Istio kinds follow their CRDs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, named, names, pod, startHarness, svc } from "./harness.ts";
import { eventually } from "./receiver.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const seed = (api: Harness["api"]) => {
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.apply("services", svc("reviews"));
  api.apply("pods", pod("reviews-v1", "10.1.0.1"));
};

describe("ingest failures", () => {
  it("503 a few times: the same batch is retried first; nothing lost, order kept", async () => {
    h = await startHarness({ batchSize: 2, batchDelayMs: 10 }, seed);
    await h.synced();
    const { api, rx } = h;
    rx.failNext(3, 503);
    for (let i = 0; i < 5; i++) api.apply("pods", pod(`p${i}`, `10.2.0.${i}`));
    await eventually("5 events", () => rx.events().length === 5);
    expect(names(rx.events())).toEqual([0, 1, 2, 3, 4].map((i) => `ADDED default/p${i}`));
    const posts = rx.requests.filter((r) => r.path === "/v1/events");
    expect(posts.map((p) => p.status)).toEqual([503, 503, 503, 200, 200, 200]);
    // The three failures and the first success carry the same batch.
    expect(new Set(posts.slice(0, 4).map((p) => p.body)).size).toBe(1);
    expect(h.logs.join("\n")).toMatch(/failed: 503 .*retrying the same batch in \d+ms/);
  });

  it("a failed resync is retried the same way", async () => {
    h = await startHarness({}, (api) => {
      seed(api);
    });
    h.rx.failNext(2, 500);
    await h.synced();
    const failed = h.rx.requests.filter((r) => r.status === 500);
    expect(failed).toHaveLength(2);
    expect(h.rx.requests.filter((r) => r.path === "/v1/resync" && r.status === 200)).toHaveLength(6);
  });

  it("401 is logged with a hint and retried with backoff", async () => {
    h = await startHarness({}, seed);
    await h.synced();
    h.rx.failNext(2, 401);
    h.api.apply("services", svc("x"));
    await eventually("the event", () => h?.rx.events().length === 1);
    expect(h.logs.join("\n")).toMatch(/failed: 401 .*check EDGEPILOT_TOKEN/);
  });

  it("400 naming an event: that event is skipped loudly, the rest of the batch delivered", async () => {
    h = await startHarness({ batchDelayMs: 50 }, seed);
    await h.synced();
    const { api, rx } = h;
    rx.failNext(1, 400, { error: "is required", index: 1, field: "object.metadata.name" });
    for (const n of ["a", "b", "c"]) api.apply("services", svc(n));
    await eventually("2 events", () => rx.events().length === 2);
    expect(names(rx.events())).toEqual(["ADDED default/a", "ADDED default/c"]);
    expect(h.logs.join("\n")).toMatch(
      /ERROR: ingest rejected event 1 of POST \/v1\/events \(3 event\(s\)\).*"name":"b"/,
    );
  });

  it("400 without an index: the batch is skipped loudly and later batches go on", async () => {
    h = await startHarness({ batchDelayMs: 10 }, seed);
    await h.synced();
    const { api, rx } = h;
    rx.failNext(1, 400, { error: "malformed JSON" });
    api.apply("services", svc("a"));
    await eventually("the rejection", () => rx.requests.some((r) => r.status === 400));
    api.apply("services", svc("b"));
    await eventually("event b", () => rx.events().length === 1);
    expect(names(rx.events())).toEqual(["ADDED default/b"]);
    expect(h.logs.join("\n")).toMatch(
      /ERROR: ingest rejected POST \/v1\/events \(1 event\(s\)\): 400 .*malformed JSON.*skipping/,
    );
  });
});

describe("housekeeping", () => {
  it("the periodic resync relists every kind", async () => {
    h = await startHarness({ resyncPeriodMs: 300 }, seed);
    await h.synced();
    await eventually("a second resync of every kind", () =>
      ["Namespace", "Node", "Service", "EndpointSlice", "Pod"].every(
        (k) => (h?.rx.resyncs(k).length ?? 0) >= 2,
      ),
    );
    expect(h.logs.join("\n")).toMatch(/periodic resync: relisting 6 kinds/);
    // It lists anew: the second Service list is at the resourceVersion of that moment.
    h.api.apply("services", svc("late"));
    await eventually("a resync with the new service", () =>
      h?.rx.resyncs("Service").some((r) => r.list.items.some((i) => i.metadata.name === "late")),
    );
  });

  it("past the queue limit: watches stop, the queue drains, then every kind is relisted", async () => {
    h = await startHarness({ batchSize: 2, maxQueuedEvents: 4, batchDelayMs: 5 }, seed);
    await h.synced();
    const { api, rx } = h;
    rx.failAll(503);
    for (let i = 0; i < 8; i++) api.apply("pods", pod(`p${i}`, `10.4.0.${i}`));
    await eventually("the overflow", () => h?.logs.some((l) => /queue holds \d+ events \(limit 4\)/.test(l)));
    await eventually("every watch closed", () => api.openWatches() === 0);
    // Changes while nothing watches arrive with the relist.
    api.apply("services", svc("while-paused"));
    rx.failAll(undefined);
    await eventually("relists after the drain", () => (rx.resyncs("Pod").length >= 2 ? true : undefined));
    await eventually("a Service resync with the change", () =>
      rx.resyncs("Service").some((r) => r.list.items.some((i) => i.metadata.name === "while-paused")),
    );
    const pods = rx
      .resyncs("Pod")
      .at(-1)
      ?.list.items.map((i) => i.metadata.name);
    expect(pods).toEqual([...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `p${i}`), "reviews-v1"]);
    // Whatever was queued before the stop was delivered in order, never dropped.
    const delivered = names(rx.events());
    expect(delivered).toEqual(delivered.map((_, i) => `ADDED default/p${i}`));
    expect(delivered.length).toBeGreaterThanOrEqual(5);
    await eventually("watching again", () => api.openWatches() === 6);
  });

  it("Istio kinds are watched once their CRDs appear, and resynced empty when they go", async () => {
    h = await startHarness({ resyncPeriodMs: 200 }, seed);
    await h.synced();
    const { api, rx } = h;
    api.serveCrds(["v1"]);
    api.apply("destinationrules", {
      metadata: { name: "reviews", namespace: "default" },
      spec: { host: "reviews" },
    });
    const dr = await eventually("a DestinationRule resync", () => rx.resyncs("DestinationRule")[0]);
    expect(dr.list.items.map((i) => i.metadata.name)).toEqual(["reviews"]);
    api.removeCrds();
    await eventually("an empty DestinationRule resync", () =>
      rx.resyncs("DestinationRule").some((r) => r.list.items.length === 0),
    );
    expect(h.relay.kinds()).not.toContain("DestinationRule");
    expect(h.logs.join("\n")).toMatch(/DestinationRule: no longer served/);
  });
});
