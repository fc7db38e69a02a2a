/** Builders for endpoint shard tests. */
import type { Endpoint, ShardKey } from "../../../lib/model/index.ts";
import type { EndpointShardsRecord } from "../../../lib/xds/types.ts";

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
