import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/index.ts";
import {
  deleteServiceShard,
  type SlicePiece,
  shardEndpointsFromSlices,
  updateServiceEndpoints,
} from "../../../lib/shards/endpoint-shards.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Entry, Store } from "../../../lib/store/store.ts";
import { east, ep, HOST, NS, record, west } from "./builders.ts";

const shardKey = keys.shards(NS, HOST);

/** Wraps a store, counting writes and failed compare-and-sets. */
function counting(inner: Store) {
  const counts = { writes: 0, conflicts: 0 };
  const store: Store = {
    ...inner,
    async put(key, value, options) {
      const result = await inner.put(key, value, options);
      if (result.ok) counts.writes++;
      else counts.conflicts++;
      return result;
    },
    async delete(key, options) {
      const deleted = await inner.delete(key, options);
      if (deleted) counts.writes++;
      return deleted;
    },
  };
  return { store, counts };
}

/**
 * Holds the first `n` reads of `key` until all `n` have arrived, so that concurrent
 * read-modify-write loops all read the same version before any of them writes.
 */
function readBarrier(inner: Store, key: string, n: number): Store {
  let waiting = 0;
  let release!: () => void;
  const allArrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    ...inner,
    async get<T>(k: string): Promise<Entry<T> | undefined> {
      const result = await inner.get<T>(k);
      if (k === key && waiting < n) {
        waiting++;
        if (waiting === n) release();
        await allArrived;
      }
      return result;
    },
  };
}

const stored = async (store: Store) => (await store.get<EndpointShardsRecord>(shardKey))?.value;

describe("updateServiceEndpoints", () => {
  it("new service full, same none, changed incremental, with one write per change", async () => {
    const { store, counts } = counting(createMemoryStore());
    expect(await updateServiceEndpoints(store, east, HOST, NS, [ep()])).toBe("full");
    expect(counts.writes).toBe(1);
    expect(await updateServiceEndpoints(store, east, HOST, NS, [ep()])).toBe("none");
    expect(counts.writes).toBe(1);
    expect(await updateServiceEndpoints(store, east, HOST, NS, [ep(), ep({ address: "10.0.0.2" })])).toBe(
      "incremental",
    );
    expect(counts.writes).toBe(2);
    expect(await stored(store)).toEqual(record({ "Kubernetes/east": [ep(), ep({ address: "10.0.0.2" })] }));
  });

  it("a new unhealthy endpoint is stored without a push", async () => {
    const { store, counts } = counting(createMemoryStore());
    await updateServiceEndpoints(store, east, HOST, NS, [ep()]);
    const sick = ep({ address: "10.0.0.2", health: "UNHEALTHY" });
    expect(await updateServiceEndpoints(store, east, HOST, NS, [ep(), sick])).toBe("none");
    expect(counts.writes).toBe(2);
    expect((await stored(store))?.shards["Kubernetes/east"]).toEqual([ep(), sick]);
  });

  it("zero endpoints drop the shard but keep the record; coming back is incremental", async () => {
    const store = createMemoryStore();
    await updateServiceEndpoints(store, east, HOST, NS, [ep()]);
    expect(await updateServiceEndpoints(store, east, HOST, NS, [])).toBe("incremental");
    expect(await stored(store)).toEqual(record({}));
    expect(await updateServiceEndpoints(store, east, HOST, NS, [ep()])).toBe("incremental");
  });

  it("zero endpoints for a service never seen writes nothing", async () => {
    const { store, counts } = counting(createMemoryStore());
    expect(await updateServiceEndpoints(store, east, HOST, NS, [])).toBe("incremental");
    expect(counts.writes).toBe(0);
    expect(await stored(store)).toBeUndefined();
  });

  it("concurrent updates from two shards both land (compare-and-set retries the loser)", async () => {
    const { store, counts } = counting(readBarrier(createMemoryStore(), shardKey, 2));
    const results = await Promise.all([
      updateServiceEndpoints(store, east, HOST, NS, [ep()]),
      updateServiceEndpoints(store, west, HOST, NS, [ep({ address: "10.1.0.1" })]),
    ]);
    expect(counts.conflicts).toBe(1);
    expect([...results].sort()).toEqual(["full", "incremental"]);
    expect(await stored(store)).toEqual(
      record({ "Kubernetes/east": [ep()], "Kubernetes/west": [ep({ address: "10.1.0.1" })] }),
    );
  });
});

describe("deleteServiceShard", () => {
  it("removes one cluster's shard, then the record with the last one", async () => {
    const store = createMemoryStore();
    await updateServiceEndpoints(store, east, HOST, NS, [ep()]);
    await updateServiceEndpoints(store, west, HOST, NS, [ep({ address: "10.1.0.1" })]);
    expect(await deleteServiceShard(store, east, HOST, NS)).toBe(true);
    expect(await stored(store)).toEqual(record({ "Kubernetes/west": [ep({ address: "10.1.0.1" })] }));
    expect(await deleteServiceShard(store, west, HOST, NS)).toBe(true);
    expect(await stored(store)).toBeUndefined();
  });

  it("removes a record kept empty by a zero-endpoint update", async () => {
    const store = createMemoryStore();
    await updateServiceEndpoints(store, east, HOST, NS, [ep()]);
    await updateServiceEndpoints(store, east, HOST, NS, []);
    expect(await deleteServiceShard(store, east, HOST, NS)).toBe(true);
    expect(await stored(store)).toBeUndefined();
  });

  it("writes nothing when the shard or the record is not there", async () => {
    const { store, counts } = counting(createMemoryStore());
    expect(await deleteServiceShard(store, east, HOST, NS)).toBe(false);
    await updateServiceEndpoints(store, west, HOST, NS, [ep()]);
    expect(await deleteServiceShard(store, east, HOST, NS)).toBe(false);
    expect(counts.writes).toBe(1);
  });
});

describe("shardEndpointsFromSlices", () => {
  const put = (store: Store, cluster: string, slice: string, endpoints: Endpoint[]) =>
    store.put<SlicePiece>(keys.slice(NS, HOST, cluster, slice), { endpoints });

  it("unions every slice piece of one cluster, sorted and unique", async () => {
    const store = createMemoryStore();
    await put(store, "east", "reviews-abc", [ep({ address: "10.0.0.3" }), ep()]);
    await put(store, "east", "reviews-def", [ep({ address: "10.0.0.2" }), ep()]);
    await put(store, "west", "reviews-xyz", [ep({ address: "10.9.9.9" })]);
    await store.put(keys.slice(NS, "other.bookinfo.svc.cluster.local", "east", "o"), {
      endpoints: [ep({ address: "1.1.1.1" })],
    });
    expect(await shardEndpointsFromSlices(store, NS, HOST, "east")).toEqual([
      ep(),
      ep({ address: "10.0.0.2" }),
      ep({ address: "10.0.0.3" }),
    ]);
  });

  it("no pieces ▶ no endpoints", async () => {
    expect(await shardEndpointsFromSlices(createMemoryStore(), NS, HOST, "east")).toEqual([]);
  });

  it("an endpoint moving between slices appears once, the ready copy winning", async () => {
    const store = createMemoryStore();
    await put(store, "east", "a", [ep({ health: "UNHEALTHY" })]);
    await put(store, "east", "b", [ep()]);
    expect(await shardEndpointsFromSlices(store, NS, HOST, "east")).toEqual([ep()]);
  });
});
