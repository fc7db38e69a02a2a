/** Builders for endpoint shard tests. */
import type { Endpoint, ShardKey } from "../../../lib/model/index.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import type { Store } from "../../../lib/store/store.ts";

export const HOST = "reviews.bookinfo.svc.cluster.local";
export const NS = "bookinfo";
export const east: ShardKey = { provider: "Kubernetes", cluster: "east" };
export const west: ShardKey = { provider: "Kubernetes", cluster: "west" };

/** A healthy endpoint at 10.0.0.1:9080 for port "grpc"; override anything. */
export function ep(o: Partial<Endpoint> = {}): Endpoint {
  return {
    address: "10.0.0.1",
    port: 9080,
    servicePortName: "grpc",
    labels: { app: "reviews" },
    locality: { region: "us-east-1", zone: "us-east-1a", subzone: "" },
    serviceAccount: "",
    health: "HEALTHY",
    ...o,
  };
}

/** A record for HOST/NS with the given shards (keys as shardKeyString) and service accounts. */
export function record(
  shards: Record<string, Endpoint[]>,
  serviceAccounts: string[] = [],
): EndpointShardsRecord {
  return { hostname: HOST, namespace: NS, shards, serviceAccounts };
}

/** Endpoint i (below 10,000) of a large shard: its address sorts, as strings (the canonical order), where i does. */
export function numbered(i: number, o: Partial<Endpoint> = {}): Endpoint {
  return ep({ address: `10.${100 + Math.floor(i / 100)}.${100 + (i % 100)}.1`, ...o });
}

/** Endpoints numbered from `from` up to (not including) `to`. */
export function numberedRange(from: number, to: number): Endpoint[] {
  return Array.from({ length: to - from }, (_, i) => numbered(from + i));
}

/** Wraps a store, recording the key of every put and delete that took effect (in order). */
export function countingWrites(inner: Store): { store: Store; writes: string[] } {
  const writes: string[] = [];
  const store: Store = {
    ...inner,
    async put(key, value, options) {
      const result = await inner.put(key, value, options);
      if (result.ok) writes.push(key);
      return result;
    },
    async delete(key, options) {
      const deleted = await inner.delete(key, options);
      if (deleted) writes.push(key);
      return deleted;
    },
  };
  return { store, writes };
}
