import { beforeEach, describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

const host = "ratings.shop.svc.cluster.local";
const svc = (labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "ratings", namespace: "shop", labels },
  spec: { clusterIP: "10.0.0.7", ports: [{ name: "grpc", port: 7070 }] },
});
const slice = (
  name: string,
  ips: string[],
  labels: Record<string, string> = { "kubernetes.io/service-name": "ratings" },
) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace: "shop", labels },
  addressType: "IPv4",
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ name: "grpc", port: 7070 }],
});
const ev = (type: string, object: unknown) => ({ type, object });

let store: Store;
async function apply(cluster: string, ...events: unknown[]) {
  const v = validateEvents(events);
  if (!v.ok) throw new Error(v.error.message);
  return applyEvents({ store, registry: defaultRegistryOptions, now: () => 5000 }, cluster, v.value);
}
const endpointsOf = async () =>
  Object.fromEntries(
    Object.entries(
      (await store.get<EndpointShardsRecord>(keys.shards("shop", host)))?.value.shards ?? {},
    ).map(([k, eps]) => [k, eps.map((e) => e.address)]),
  );

beforeEach(() => {
  store = createMemoryStore();
});

describe("applyEvents", () => {
  it("summarises a batch and queues one merged push", async () => {
    const s = await apply(
      "east",
      ev("ADDED", svc()),
      ev("ADDED", slice("ratings-a", ["10.1.0.1"])),
      ev("ADDED", slice("ratings-b", ["10.1.0.2"])),
      ev("ADDED", { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "shop" } }),
      ev("ADDED", slice("orphan", ["10.9.9.9"], {})),
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } },
    );
    expect(s).toEqual({
      cluster: "east",
      events: 6,
      applied: 4,
      unchanged: 0,
      stale: 0,
      ignored: { EndpointSlice: 1 },
      bookmarks: 1,
      unsupported: [],
      dangling: [],
      rejected: [],
      push: { full: true, configs: 1 },
    });
    const queue = await readQueue(store);
    expect(queue).toHaveLength(1);
    expect(queue[0]?.request).toMatchObject({
      full: true,
      configsUpdated: [`ServiceEntry/shop/${host}`],
      reasons: { endpoint: 2, service: 1 },
    });
    expect(await endpointsOf()).toEqual({ "Kubernetes/east": ["10.1.0.1", "10.1.0.2"] });
  });

  it("an unchanged object is applied once and queues nothing the second time", async () => {
    await apply("east", ev("ADDED", svc()), ev("ADDED", slice("ratings-a", ["10.1.0.1"])));
    const again = await apply(
      "east",
      ev("MODIFIED", svc()),
      ev("MODIFIED", slice("ratings-a", ["10.1.0.1"])),
    );
    expect(again).toMatchObject({ applied: 0, unchanged: 2, push: null });
    expect(await readQueue(store)).toHaveLength(1);
  });

  it("serves slices that arrived before their service", async () => {
    await apply("east", ev("ADDED", slice("ratings-a", ["10.1.0.1"])));
    await apply("east", ev("ADDED", svc()));
    expect(await endpointsOf()).toEqual({ "Kubernetes/east": ["10.1.0.1"] });
  });

  it("keeps each cluster's shard apart, and a service deleted in one cluster keeps the other's", async () => {
    await apply("east", ev("ADDED", svc()), ev("ADDED", slice("ratings-a", ["10.1.0.1"])));
    await apply("west", ev("ADDED", svc()), ev("ADDED", slice("ratings-a", ["10.2.0.1"])));
    expect(await endpointsOf()).toEqual({ "Kubernetes/east": ["10.1.0.1"], "Kubernetes/west": ["10.2.0.1"] });
    await apply("east", ev("DELETED", svc()));
    expect(await endpointsOf()).toEqual({ "Kubernetes/west": ["10.2.0.1"] });
    expect(await store.get(keys.service("shop", host, "west"))).toBeDefined();
    expect(await store.get(keys.service("shop", host, "east"))).toBeUndefined();
  });

  it("a DELETED slice removes its endpoints and a DELETED unknown object is fine", async () => {
    await apply(
      "east",
      ev("ADDED", svc()),
      ev("ADDED", slice("ratings-a", ["10.1.0.1"])),
      ev("ADDED", slice("ratings-b", ["10.1.0.2"])),
    );
    const s = await apply(
      "east",
      ev("DELETED", slice("ratings-a", ["10.1.0.1"])),
      ev("DELETED", slice("never-seen", [])),
    );
    expect(s).toMatchObject({ applied: 1, unchanged: 1, push: { full: false } });
    expect(await endpointsOf()).toEqual({ "Kubernetes/east": ["10.1.0.2"] });
  });
});
