/**
 * A watch batch refreshes each service's shard once for all its slice events (deferred-slices.ts):
 * the state it leaves is the state the same events leave one batch each (each refreshed at once),
 * and the queued push follows Istio's rules for the batch as a whole. A Service event's own refresh
 * is noted too: with Services among the events, state and push are exactly those of every event
 * applied at once through its handler.
 */
import { describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvent, applyEvents, ingestContext, validateEvents } from "../../../lib/ingest/index.ts";
import { mergeAll, type PushRequest } from "../../../lib/model/index.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { countingStore } from "../xds/counting-store.ts";

const svc = (name: string) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "shop" },
  spec: { clusterIP: "10.0.0.7", ports: [{ name: "grpc", port: 7070 }] },
});
const slice = (name: string, service: string, ips: string[]) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace: "shop", labels: { "kubernetes.io/service-name": service } },
  addressType: "IPv4",
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ name: "grpc", port: 7070 }],
});
const pod = (name: string, ip: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "shop", labels: { app: "ratings" } },
  spec: { nodeName: "n1", serviceAccountName: "ratings" },
  status: { podIP: ip, podIPs: [{ ip }], phase: "Running" },
});
const ev = (type: string, object: unknown) => ({ type, object });
/** The slice with every endpoint not ready. */
const notReady = (s: ReturnType<typeof slice>) => ({
  ...s,
  endpoints: s.endpoints.map((e) => ({ ...e, conditions: { ready: false } })),
});
/** ratings with a ready slice and a not-ready one. */
const withNotReady = () => [
  ev("ADDED", svc("ratings")),
  ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"])),
  ev("ADDED", notReady(slice("r-b", "ratings", ["10.1.0.2"]))),
];
/** A slice noted, ratings made to publish not-ready addresses, another slice changed after it. */
const publishingNotReady = () => [
  ev("ADDED", slice("r-c", "ratings", ["10.1.0.3"])),
  ev("MODIFIED", { ...svc("ratings"), spec: { ...svc("ratings").spec, publishNotReadyAddresses: true } }),
  ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.1", "10.1.0.4"])),
];

/**
 * The oracle: each event through its handler at once, nothing noted (as a resync applies objects),
 * each shard refreshed when its event applies; the pushes the handlers returned, merged.
 */
async function applyEach(store: Store, events: unknown[]) {
  const v = validateEvents(events);
  if (!v.ok) throw new Error(v.error.message);
  const ctx = ingestContext({ store, registry: defaultRegistryOptions, now: () => 5000 }, "east");
  const pushes: PushRequest[] = [];
  for (const e of v.value) {
    if (e.type === "BOOKMARK") continue;
    const outcome = await applyEvent(ctx, e.type === "DELETED", e.object, { trackVersions: true });
    if (outcome !== "stale" && outcome.kind === "applied" && outcome.push) pushes.push(outcome.push);
  }
  return mergeAll(pushes);
}

async function apply(store: Store, events: unknown[]) {
  const v = validateEvents(events);
  if (!v.ok) throw new Error(v.error.message);
  return applyEvents({ store, registry: defaultRegistryOptions, now: () => 5000 }, "east", v.value);
}

/** What the store serves from: every key and value but version records, queued pushes and markers. */
async function state(store: Store) {
  const skip = [keys.objects(), keys.pendingPrefix(), keys.commitMarker()];
  return (await listAll(store, ""))
    .filter((e) => !skip.some((p) => e.key.startsWith(p)))
    .map((e) => [e.key, e.value]);
}

interface Case {
  name: string;
  /** Applied first, one batch, to both stores. */
  before?: unknown[];
  /** Run on both stores after `before`. */
  prepare?: (store: Store) => Promise<unknown>;
  events: unknown[];
}

const cases: Case[] = [
  {
    name: "a service and three slices",
    events: [
      ev("ADDED", svc("ratings")),
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1", "10.1.0.2"])),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.3"])),
      ev("ADDED", slice("r-c", "ratings", ["10.1.0.2", "10.1.0.4"])),
    ],
  },
  {
    name: "slices before their service, and a pod between them",
    events: [
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"])),
      ev("ADDED", pod("ratings-1", "10.1.0.1")),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.2"])),
      ev("ADDED", svc("ratings")),
    ],
  },
  {
    name: "a slice changed, changed back, another deleted",
    before: [
      ev("ADDED", svc("ratings")),
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"])),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.2"])),
    ],
    events: [
      ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.9"])),
      ev("DELETED", slice("r-b", "ratings", ["10.1.0.2"])),
      ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.1"])),
    ],
  },
  {
    name: "services and their slices interleaved, as a relist sends them",
    events: [
      ev("ADDED", svc("ratings")),
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1", "10.1.0.2"])),
      ev("ADDED", svc("reviews")),
      ev("ADDED", slice("v-a", "reviews", ["10.2.0.1"])),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.3"])),
    ],
  },
  {
    name: "a service changed around its slices (not-ready endpoints published, then not)",
    before: withNotReady(),
    events: [
      ...publishingNotReady(),
      ev("MODIFIED", svc("ratings")),
      ev("DELETED", slice("r-c", "ratings", ["10.1.0.3"])),
    ],
  },
  {
    name: "a service changed between its slices (not-ready endpoints published from then on)",
    before: withNotReady(),
    events: publishingNotReady(),
  },
  {
    name: "a service changed while its shard outlived its pieces",
    before: [ev("ADDED", svc("ratings")), ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"]))],
    // A store left so by other means (an older version's layout, a hand edit): only a whole refresh drops the shard.
    prepare: (store) => store.delete(keys.slice("shop", "ratings.shop.svc.cluster.local", "east", "r-a")),
    events: [
      ev("MODIFIED", { ...svc("ratings"), metadata: { ...svc("ratings").metadata, labels: { app: "r" } } }),
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"])),
    ],
  },
  {
    name: "a service deleted after its slices, then created again",
    before: [ev("ADDED", svc("ratings")), ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"]))],
    events: [
      ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.1", "10.1.0.2"])),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.3"])),
      ev("DELETED", svc("ratings")),
      ev("ADDED", slice("r-c", "ratings", ["10.1.0.4"])),
      ev("ADDED", svc("ratings")),
    ],
  },
  {
    name: "a slice moved to another service",
    before: [ev("ADDED", svc("ratings")), ev("ADDED", svc("reviews"))],
    events: [
      ev("ADDED", slice("s-a", "ratings", ["10.1.0.1"])),
      ev("MODIFIED", slice("s-a", "reviews", ["10.1.0.1", "10.1.0.5"])),
      ev("ADDED", slice("s-b", "ratings", ["10.1.0.2"])),
    ],
  },
];

describe("a watch batch's slice changes, one refresh per service", () => {
  it.each(cases)("$name: the state one batch leaves is the state of one batch per event", async (c) => {
    const batched = createMemoryStore();
    const perEvent = createMemoryStore();
    for (const store of [batched, perEvent]) {
      if (c.before) await apply(store, c.before);
      await c.prepare?.(store);
    }
    await apply(batched, c.events);
    for (const e of c.events) await apply(perEvent, [e]);
    expect(await state(batched)).toEqual(await state(perEvent));
  });

  it.each(
    cases.filter((c) => c.events.some((e) => (e as { object: { kind: string } }).object.kind === "Service")),
  )("$name: the state and the push of the batch are those of each event applied at once", async (c) => {
    const batched = createMemoryStore();
    const each = createMemoryStore();
    for (const store of [batched, each]) {
      if (c.before) await apply(store, c.before);
      await c.prepare?.(store);
    }
    const before = new Set((await readQueue(batched)).map((q) => q.key));
    await apply(batched, c.events);
    const pushed = (await readQueue(batched)).filter((q) => !before.has(q.key)).map((q) => q.request);
    expect(pushed).toEqual([await applyEach(each, c.events)]);
    expect(await state(batched)).toEqual(await state(each));
  });

  it("a new service's slices in one batch: one full push, one trigger per slice", async () => {
    const store = createMemoryStore();
    await apply(store, [ev("ADDED", svc("ratings"))]);
    const before = new Set((await readQueue(store)).map((q) => q.key));
    const s = await apply(store, [
      ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"])),
      ev("ADDED", slice("r-b", "ratings", ["10.1.0.2"])),
    ]);
    expect(s).toMatchObject({ applied: 2, push: { full: true, configs: 1 } });
    // Queue keys are not in arrival order: the batch's push is the one key that is new.
    const added = (await readQueue(store)).filter((q) => !before.has(q.key));
    expect(added).toHaveLength(1);
    expect(added[0]?.request).toMatchObject({ full: true, reasons: { endpoint: 2 } });
  });

  it("a slice changed and changed back within a batch needs no push (Istio's debounce merges the same way)", async () => {
    const store = createMemoryStore();
    await apply(store, [ev("ADDED", svc("ratings")), ev("ADDED", slice("r-a", "ratings", ["10.1.0.1"]))]);
    const s = await apply(store, [
      ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.9"])),
      ev("MODIFIED", slice("r-a", "ratings", ["10.1.0.1"])),
    ]);
    expect(s).toMatchObject({ applied: 2, unchanged: 0, push: null });
  });

  it.each([1, 2, 7])("%i slice events of a service in one batch write its shard once", async (n) => {
    const store = countingStore();
    await apply(store, [ev("ADDED", svc("ratings")), ev("ADDED", svc("reviews"))]);
    const ratings = keys.shards("shop", "ratings.shop.svc.cluster.local");
    const reviews = keys.shards("shop", "reviews.shop.svc.cluster.local");
    const [r0, v0] = [store.putsTo(ratings), store.putsTo(reviews)];
    // The two services' slices interleaved: each service is still refreshed (and written) once.
    const events = Array.from({ length: n }, (_, i) => [
      ev("ADDED", slice(`ra-${i}`, "ratings", [`10.1.0.${i + 1}`])),
      ev("ADDED", slice(`rv-${i}`, "reviews", [`10.2.0.${i + 1}`])),
    ]).flat();
    expect(await apply(store, events)).toMatchObject({ applied: 2 * n });
    expect([store.putsTo(ratings) - r0, store.putsTo(reviews) - v0]).toEqual([1, 1]);
    const shard = (await store.get<EndpointShardsRecord>(ratings))?.value;
    expect(Object.values(shard?.shards ?? {}).flat()).toHaveLength(n);
  });
});
