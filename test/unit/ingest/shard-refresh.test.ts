/**
 * Shard refresh rebuilds only what changed: a slice change joins that slice's pods alone, a pod
 * change rebuilds only the slices naming it, and the shard is still the union of every slice.
 * A Node relabelled reaches endpoints whose node comes from their pod (the slice names none).
 */
import { describe, expect, it } from "vitest";
import { createIngestCore } from "../../../lib/core/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice, event, pod, service } from "../../e2e/support/kube.ts";

const host = "reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };

/** A memory store that notes every key read with get or getMany. */
function recordingStore() {
  const inner = createMemoryStore();
  const read: string[] = [];
  const store: Store = {
    ...inner,
    get: (key) => {
      read.push(key);
      return inner.get(key);
    },
    getMany: (ks) => {
      read.push(...ks);
      return inner.getMany(ks);
    },
  } as Store;
  return { store, read };
}

function ingest(store: Store) {
  const core = createIngestCore({ store, now: () => 1_000, registry: defaultRegistryOptions, log: () => {} });
  return async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    return core.events("east", v.value);
  };
}

const slice = (name: string, ...ips: string[]) =>
  endpointSlice(
    name,
    "reviews",
    "default",
    port,
    ips.map((ip) => ({ ip, ready: true })),
  );

async function shardAddresses(store: Store): Promise<string[]> {
  const record = (await store.get<EndpointShardsRecord>(keys.shards("default", host)))?.value;
  return Object.values(record?.shards ?? {})
    .flatMap((eps) => eps.map((e) => e.address))
    .sort();
}

describe("shard refresh", () => {
  it("a slice change joins only that slice's pods; the shard keeps every slice's endpoints", async () => {
    const { store, read } = recordingStore();
    const events = ingest(store);
    await events(
      event("ADDED", service("reviews", "default", [port])),
      ...["10.0.1.1", "10.0.1.2", "10.0.2.1"].map((ip) => event("ADDED", pod("reviews", "default", ip))),
      event("ADDED", slice("reviews-1", "10.0.1.1")),
      event("ADDED", slice("reviews-2", "10.0.2.1")),
    );
    read.length = 0;
    await events(event("MODIFIED", slice("reviews-1", "10.0.1.1", "10.0.1.2")));
    const podsRead = read.filter((k) => k.startsWith("pod/")).sort();
    expect(podsRead).toEqual([
      keys.pod("east", "default", "reviews-10-0-1-1"),
      keys.pod("east", "default", "reviews-10-0-1-2"),
    ]);
    expect(await shardAddresses(store)).toEqual(["10.0.1.1", "10.0.1.2", "10.0.2.1"]);
  });

  it("a pod change rebuilds only the slices naming it", async () => {
    const { store, read } = recordingStore();
    const events = ingest(store);
    await events(
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", pod("reviews", "default", "10.0.1.1")),
      event("ADDED", slice("reviews-1", "10.0.1.1")),
      event("ADDED", slice("reviews-2", "10.0.2.1")),
    );
    read.length = 0;
    const summary = await events(event("ADDED", pod("reviews", "default", "10.0.2.1")));
    expect(summary.push).toBeDefined();
    expect(read.filter((k) => k.startsWith("pod/"))).not.toContain(
      keys.pod("east", "default", "reviews-10-0-1-1"),
    );
    const record = (await store.get<EndpointShardsRecord>(keys.shards("default", host)))?.value;
    expect(record?.serviceAccounts).toEqual(["spiffe://cluster.local/ns/default/sa/reviews"]);
    // reviews-1's endpoint comes from the stored shard; reviews-2's now has its pod.
    expect(await shardAddresses(store)).toEqual(["10.0.1.1", "10.0.2.1"]);
  });

  it("a Node relabelled reaches an endpoint whose node comes from its pod", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    const noNode = slice("reviews-1", "10.0.1.1");
    for (const e of noNode.endpoints) (e as { nodeName?: string }).nodeName = undefined;
    const node = (zone: string, rv: string) => ({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "node-1", resourceVersion: rv, labels: { "topology.kubernetes.io/zone": zone } },
    });
    await events(
      event("ADDED", node("a", "5")),
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", pod("reviews", "default", "10.0.1.1")),
      event("ADDED", JSON.parse(JSON.stringify(noNode))),
    );
    const zoneOf = async () =>
      Object.values((await store.get<EndpointShardsRecord>(keys.shards("default", host)))?.value.shards ?? {})
        .flat()
        .map((e) => e.locality.zone);
    expect(await zoneOf()).toEqual(["a"]);
    const summary = await events(event("MODIFIED", node("b", "6")));
    expect(summary.push).toBeDefined();
    expect(await zoneOf()).toEqual(["b"]);
  });
});
