/**
 * After a restart with an empty store, the Services and EndpointSlice resyncs may both arrive
 * (registry synced) before the Pod resync: an endpoint whose pod is not stored waits, so its
 * service's assignment must not go out short or empty until the Pod resync (or
 * PILOT_SYNC_TIMEOUT) — lib/push/held-pods.ts. The mesh core on a manual clock over the memory
 * store, no sleeps; every published assignment is recorded with the gate's state as it went out.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { HeldEndpoints } from "../../../lib/push/held-endpoints.ts";
import { keys } from "../../../lib/store/index.ts";
import { event, pod, service } from "../../e2e/support/kube.ts";
import { cla, createRestartHarness, host, port, slice, timeoutMs } from "./restart-harness.ts";

/** The restart harness, reading a service's stored assignment by service name, what waits for pods, and the gate. */
function harness() {
  const h = createRestartHarness();
  const stored = (name: string) => h.stored(cla(name));
  const held = async () => (await h.core.store.get<HeldEndpoints>(keys.heldForPods()))?.value;
  const gate = async () => (await h.core.status()).sync;
  return { ...h, stored, held, gate };
}

let h: ReturnType<typeof harness>;
beforeEach(async () => {
  h = harness();
  await h.core.start();
});

describe("a restart that hears EndpointSlices before Pods", () => {
  it("publishes no assignment, short or empty, until the Pod resync; then one with every endpoint", async () => {
    await h.resync(
      "east",
      "Service",
      service("reviews", "default", [port]),
      service("details", "default", [port]),
    );
    // One pod came by a watch event already; the other waits for the Pod resync.
    await h.events("east", event("ADDED", pod("reviews", "default", "10.1.0.1")));
    await h.resync(
      "east",
      "EndpointSlice",
      slice("reviews", "10.1.0.1", "10.1.0.2"),
      slice("details", "10.1.0.3"),
    );
    expect(await h.gate()).toMatchObject({ synced: true, published: false });
    await h.settle();
    await h.settle();
    expect([await h.stored("reviews"), await h.stored("details")]).toEqual([undefined, undefined]);
    expect(h.sent).toEqual([]);
    expect(await h.held()).toMatchObject({
      services: [
        ["default", host("details")],
        ["default", host("reviews")],
      ],
      clusters: ["east"],
    });
    // The held names are missing: the gate stays closed.
    expect(await h.gate()).toMatchObject({ synced: true, published: false });
    expect((await h.gate()).clusters).toEqual([
      { cluster: "east", services: true, endpoints: true, synced: true, pods: false },
    ]);

    await h.resync(
      "east",
      "Pod",
      ...["10.1.0.1", "10.1.0.2"].map((ip) => pod("reviews", "default", ip)),
      pod("details", "default", "10.1.0.3"),
    );
    await h.settle();
    expect([await h.stored("reviews"), await h.stored("details")]).toEqual([2, 1]);
    expect(h.sent.filter((s) => s.endpoints !== 2 && s.name === cla("reviews"))).toEqual([]);
    expect(h.sent.every((s) => s.endpoints !== null && s.endpoints > 0)).toBe(true);
    expect(await h.held()).toBeUndefined();
    expect(await h.gate()).toMatchObject({ published: true });
    expect(h.lines).toContain(
      "push: Pod resync arrived or PILOT_SYNC_TIMEOUT passed: regenerating 2 service(s) whose endpoints waited for their pods",
    );

    // After the Pod resync nothing is held: a new endpoint whose pod comes later is just not served yet.
    await h.events("east", event("MODIFIED", slice("reviews", "10.1.0.1", "10.1.0.2", "10.1.0.4")));
    await h.settle();
    expect(await h.stored("reviews")).toBe(2);
    await h.events("east", event("ADDED", pod("reviews", "default", "10.1.0.4")));
    await h.settle();
    expect(await h.stored("reviews")).toBe(3);
  });

  it("publishes what it has once PILOT_SYNC_TIMEOUT passed without a Pod resync", async () => {
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.events("east", event("ADDED", pod("reviews", "default", "10.1.0.1")));
    await h.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1", "10.1.0.2"));
    await h.settle();
    expect(await h.stored("reviews")).toBeUndefined();
    await h.clock.advance(timeoutMs);
    await h.settle();
    expect(await h.stored("reviews")).toBe(1);
    expect(await h.held()).toBeUndefined();
    expect(await h.gate()).toMatchObject({ timedOut: true, published: true });
  });

  it("behaves as before when the Pod resync came before the slices", async () => {
    await h.resync("east", "Pod", pod("reviews", "default", "10.1.0.1"));
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1", "10.1.0.2"));
    await h.settle();
    // 10.1.0.2's pod does not exist: it is not served, and nothing waits for it.
    expect(await h.stored("reviews")).toBe(1);
    expect(await h.held()).toBeUndefined();
    expect(await h.gate()).toMatchObject({ published: true });
  });

  it("holds only services with endpoints in a cluster still awaiting its Pod resync; another's arrival re-holds them", async () => {
    await h.resync("east", "Service", service("reviews", "default", [port]));
    await h.resync("west", "Service", service("ratings", "default", [port]));
    await h.resync("east", "EndpointSlice", slice("reviews", "10.1.0.1"));
    await h.resync("west", "EndpointSlice", slice("ratings", "10.2.0.1"));
    await h.settle();
    expect(await h.held()).toMatchObject({ clusters: ["east", "west"] });
    await h.resync("east", "Pod", pod("reviews", "default", "10.1.0.1"));
    await h.settle();
    // east's services are out; west's is held again, waiting for west's Pods.
    expect([await h.stored("reviews"), await h.stored("ratings")]).toEqual([1, undefined]);
    expect(await h.held()).toMatchObject({ services: [["default", host("ratings")]], clusters: ["west"] });
    expect(await h.gate()).toMatchObject({ synced: true, published: false });
    await h.resync("west", "Pod", pod("ratings", "default", "10.2.0.1"));
    await h.settle();
    expect(await h.stored("ratings")).toBe(1);
    expect(await h.gate()).toMatchObject({ published: true });
  });
});
