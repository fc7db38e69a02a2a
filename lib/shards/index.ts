export * from "./endpoint-order.ts";
export * from "./endpoint-shards.ts";
