import type { Endpoint } from "../model/index.ts";

/** The EndpointShards of one service, as stored under keys.shards(). */
export interface EndpointShardsRecord {
  hostname: string;
  namespace: string;
  /** shardKeyString ─▶ endpoints reported by that shard. A shard with no endpoints is absent. */
  shards: Record<string, Endpoint[]>;
  /** Sorted, unique service accounts of all endpoints in all shards. */
  serviceAccounts: string[];
}
