export * from "./endpoint-order.ts";
export * from "./endpoint-shards.ts";
export * from "./shard-pieces.ts";
export * from "./shard-store.ts";
