/**
 * After a restart with an empty store, a Services resync that arrives before the endpoint kind's
 * must not publish any ClusterLoadAssignment emptied for want of endpoints not heard yet
 * (lib/push/held-endpoints.ts): the mesh core on a manual clock over the memory store, no sleeps.
 * Every published assignment is recorded, so "never empty before sync" is checked on every push.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { HeldEndpoints } from "../../../lib/push/held-endpoints.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { event, pod, service } from "../../e2e/support/kube.ts";
import { destinationRule } from "../ingest/support/istio.ts";
import {
  cla,
  createRestartHarness,
  port,
  type RestartHarnessOptions,
  slice,
  timeoutMs,
} from "./restart-harness.ts";

/** The restart harness, reading stored assignments by name, a stored cluster, and the held services. */
function harness(options: RestartHarnessOptions = {}) {
  const h = createRestartHarness(options);
  const store = h.core.store;
  /** The endpoint count of each stored assignment, by name. */
  const stored = async (...names: string[]) => {
    const out: Record<string, number | undefined> = {};
    for (const name of names) out[name] = await h.stored(name);
    return out;
  };
  const cluster = async (name: string) =>
    (await store.get<StoredResource>(keys.resource(TypeUrl.cluster, name)))?.value !== undefined;
  const held = async () => (await store.get<HeldEndpoints>(keys.heldEndpoints()))?.value?.services;
  return { ...h, stored, cluster, held };
}

let h: ReturnType<typeof harness>;
beforeEach(async () => {
  h = harness();
  await h.core.start();
});

describe("a restart that hears Services before endpoints", () => {
  it("publishes no assignment before sync, then each one with what the resync brought, before the gate opens", async () => {
    await h.resync("east", "Pod", pod("reviews", "default", "10.1.0.1"));
    // reviews has endpoints in the cluster; details truly has none.
    await h.resync(
      "east",
      "Service",
      service("reviews", "default", [port]),
      service("details", "default", [port]),
    );
    await h.settle();
    // Clusters go out (nothing to hold there), assignments do not: neither empty nor removed.
    expect(await h.cluster(cla("reviews"))).toBe(true);
    expect(await h.stored(cla("reviews"), cla("details"))).toEqual({
      [cla("reviews")]: undefined,
      [cla("details")]: undefined,
    });
    expect(h.sent).toEqual([]);
    expect(await h.held()).toEqual([
      ["default", "details.default.svc.cluster.local"],
      ["default", "reviews.default.svc.cluster.local"],
    ]);
    expect(h.lines.filter((l) => /inconsistent|dangling/.test(l))).toEqual([]);

    await h.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1"));
    expect((await h.core.status()).sync).toMatchObject({ synced: true, published: false });
    await h.settle();
    // One turn: reviews with its endpoint, details with its legitimate empty assignment, then the gate.
    expect(await h.stored(cla("reviews"), cla("details"))).toEqual({
      [cla("reviews")]: 1,
      [cla("details")]: 0,
    });
    expect(h.sent.sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual([
      { name: cla("details"), endpoints: 0, synced: true },
      { name: cla("reviews"), endpoints: 1, synced: true },
    ]);
    expect(await h.held()).toBeUndefined();
    expect((await h.core.status()).sync).toMatchObject({ synced: true, published: true });
    expect(h.lines).toContain(
      "push: registry synced: regenerating 2 service(s) whose endpoints were held back",
    );
    // Later pushes are as before: an endpoint change is EDS-only, and nothing is held any more.
    await h.events("east", event("MODIFIED", slice("reviews")));
    const turn = await h.settle();
    expect(turn.flushes.map((f) => f.request?.full)).toEqual([false]);
    expect(await h.stored(cla("reviews"))).toEqual({ [cla("reviews")]: 0 });
  });

  it("publishes an assignment before sync once its endpoints are heard, and a heard-then-emptied one empty", async () => {
    await h.resync(
      "east",
      "Service",
      service("reviews", "default", [port]),
      service("ratings", "default", [port]),
    );
    await h.settle();
    expect(await h.held()).toHaveLength(2);
    // Watch events before the endpoint resync: reviews' slice arrives, ratings' comes and goes.
    await h.events(
      "east",
      event("ADDED", pod("reviews", "default", "10.1.0.1")),
      event("ADDED", pod("ratings", "default", "10.1.0.2")),
      event("ADDED", slice("reviews", "10.1.0.1")),
      event("ADDED", slice("ratings", "10.1.0.2")),
    );
    await h.settle();
    await h.events("east", event("MODIFIED", slice("ratings")));
    await h.settle();
    expect((await h.core.status()).sync.synced).toBe(false);
    expect(await h.stored(cla("reviews"), cla("ratings"))).toEqual({
      [cla("reviews")]: 1,
      [cla("ratings")]: 0,
    });
    expect(await h.held()).toBeUndefined();
    expect(h.sent.filter((s) => s.endpoints === 0 && s.name === cla("reviews"))).toEqual([]);
  });

  it("publishes what was held once PILOT_SYNC_TIMEOUT passed without the endpoint resync", async () => {
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.settle();
    expect(await h.stored(cla("reviews"))).toEqual({ [cla("reviews")]: undefined });
    await h.clock.advance(timeoutMs);
    await h.settle();
    expect(await h.stored(cla("reviews"))).toEqual({ [cla("reviews")]: 0 });
    expect((await h.core.status()).sync).toMatchObject({ synced: true, timedOut: true, published: true });
  });

  it("holds only services of clusters whose endpoint resync has not arrived", async () => {
    // Both clusters heard from; east has sent both resyncs (its empty endpoint list is the truth),
    // west only its Services: the registry is not synced.
    await h.resync("west", "Service", service("ratings", "default", [port]));
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.resync("east", "EndpointSlice");
    await h.settle();
    expect((await h.core.status()).sync.synced).toBe(false);
    expect(await h.stored(cla("reviews"), cla("ratings"))).toEqual({
      [cla("reviews")]: 0,
      [cla("ratings")]: undefined,
    });
    await h.resync("west", "EndpointSlice");
    await h.settle();
    expect(await h.stored(cla("ratings"))).toEqual({ [cla("ratings")]: 0 });
    expect((await h.core.status()).sync.published).toBe(true);
  });

  it("keeps what it held in the store: a host restarted before sync (a Durable Object) still releases it", async () => {
    await h.resync("east", "Service", service("details", "default", [port]));
    await h.settle();
    h.core.stop();
    // The same durable store and clock, a new core: the record loads unsynced, the held set with it.
    const again = harness({ store: h.core.store, clock: h.clock });
    await again.core.start();
    expect((await again.core.status()).sync).toMatchObject({ synced: false, instance: "instance-1" });
    expect(await again.held()).toEqual([["default", "details.default.svc.cluster.local"]]);
    await again.resync("east", "EndpointSlice");
    await again.settle();
    expect(await again.stored(cla("details"))).toEqual({ [cla("details")]: 0 });
    expect(await again.held()).toBeUndefined();
    again.core.stop();
  });

  it("with PILOT_ENABLE_EDS_DEBOUNCE=false, opens the gate only once the held services are published", async () => {
    const g = harness({ debounce: { ...defaultDebounceOptions, enableEdsDebounce: false } });
    await g.core.start();
    await g.resync(
      "east",
      "Service",
      service("reviews", "default", [port]),
      service("details", "default", [port]),
    );
    await g.events(
      "east",
      ...["10.1.0.1", "10.1.0.2"].map((ip) => event("ADDED", pod("reviews", "default", ip))),
      event("ADDED", slice("reviews", "10.1.0.1")),
    );
    await g.settle();
    expect(await g.held()).toEqual([["default", "details.default.svc.cluster.local"]]);
    await g.clock.advance(1000);
    await g.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1"));
    // Right as the registry syncs: an endpoint change (EDS-only, not debounced) and a new service.
    await g.events("east", event("MODIFIED", slice("reviews", "10.1.0.1", "10.1.0.2")));
    await g.events("east", event("ADDED", service("ratings", "default", [port])));
    const turn = await g.core.turn();
    // The endpoint change went out; the full pushes (details' release among them) wait for quiet.
    expect(turn.flushes.map((f) => f.request?.full)).toEqual([false]);
    expect(await g.stored(cla("reviews"), cla("details"))).toEqual({
      [cla("reviews")]: 2,
      [cla("details")]: undefined,
    });
    expect((await g.core.status()).sync).toMatchObject({ synced: true, published: false });
    await g.settle();
    expect(await g.stored(cla("details"), cla("ratings"))).toEqual({
      [cla("details")]: 0,
      [cla("ratings")]: 0,
    });
    expect((await g.core.status()).sync).toMatchObject({ synced: true, published: true });
    g.core.stop();
  });

  it("holds a namespace view's assignments too (a DestinationRule exported to its own namespace)", async () => {
    const v1 = `outbound|9080|v1|reviews.default.svc.cluster.local`;
    const overlay = async () => {
      const r = await h.core.store.get<StoredResource>(keys.viewResource("default", TypeUrl.endpoint, v1));
      return r && fromBinary(ClusterLoadAssignmentSchema, r.value.body).endpoints.length;
    };
    await h.resync("east", "Pod", pod("reviews", "default", "10.1.0.1"));
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.events(
      "east",
      event(
        "ADDED",
        destinationRule("reviews.default.svc.cluster.local", [{ name: "v1", labels: {} }], {
          name: "reviews",
          spec: { exportTo: ["."] },
        }),
      ),
    );
    await h.settle();
    // The view's subset cluster is there; its assignment, like the shared one, waits for the endpoints.
    expect(await h.core.store.get(keys.viewResource("default", TypeUrl.cluster, v1))).toBeDefined();
    expect(await overlay()).toBeUndefined();
    expect(await h.stored(cla("reviews"))).toEqual({ [cla("reviews")]: undefined });
    await h.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1"));
    await h.settle();
    expect(await overlay()).toBe(1);
    expect(await h.stored(cla("reviews"))).toEqual({ [cla("reviews")]: 1 });
  });
});
