/**
 * Where a store key lives in the DynamoDB table (lib/store/dynamodb.ts explains the design): its
 * partition (the partition key) and its place in it (the sort key), and how a prefix list reads
 * them. Pure: no SDK, no I/O.
 */
import { keys } from "./keys.ts";

/**
 * How many "/"-ended segments make a family's partition, by the key's first segment. Each depth is
 * the shallowest at which the hot paths list that family (so each such list is one Query), or, for a
 * family never listed, the depth that spreads its writes best. Families not named here: 1 (the whole
 * family is one partition: `svc/`, `gen/`, `proxy/`, `meta/`, `pushlog/`, ... are listed whole or
 * written rarely).
 */
export const partitionDepths: Readonly<Record<string, number>> = {
  eps: 4, // eps/<ns>/<host>/<cluster>/ (slicePrefix): one partition per service and cluster
  shard: 2, // shard/<ns>/: shards per namespace; shard/ is listed only by debug and metrics (a walk)
  obj: 4, // obj/<cluster>/<kind>/<ns>/: written per event; obj/<cluster>/<kind>/ (resync) is a walk
  pod: 3, // pod/<cluster>/<ns>/ (podsIn)
  ref: 4, // ref/<on>/<cluster>/<id>/ (refPrefix); ref/<on>/ (legacy migration) is a walk
  refs: 4, // refs/<on>/<cluster>/<bucket>/: never listed
  podips: 3, // podips/<cluster>/<bucket>/: never listed
  xds: 3, // xds/<type URL with its one "/">/ (resourcePrefix)
  xdsv: 4, // xdsv/<view>/<type URL>/: never listed
  cfg: 2, // cfg/<kind>/ (configPrefix, configsIn); cfg/ is listed only by debug (a walk)
  push: 2, // push/pending/ (pendingPrefix); push/flushing and the held lists are one-key partitions
};

/**
 * The partition a key lives in: the key up to its family's depth-th "/" (`full`: it holds every key
 * that starts with it), or the key itself when it has fewer (a partition of that one key).
 */
export function partitionOf(key: string): { part: string; full: boolean } {
  const first = key.indexOf("/");
  if (first < 0) return { part: key, full: false };
  const depth = partitionDepths[key.slice(0, first)] ?? 1;
  let end = first;
  for (let d = 1; d < depth; d++) {
    end = key.indexOf("/", end + 1);
    if (end < 0) return { part: key, full: false };
  }
  return { part: key.slice(0, end + 1), full: true };
}

/** Marks every partition and sort key value, so the empty key has one too and no key collides with the table's own items. */
const mark = "=";

/** The table key of a store key. */
export function itemKey(key: string): { pk: string; sk: string } {
  const { part } = partitionOf(key);
  return { pk: mark + part, sk: mark + key.slice(part.length) };
}

/** The store key an item holds (the inverse of itemKey). */
export function storeKeyOf(pk: string, sk: string): string {
  return pk.slice(mark.length) + sk.slice(mark.length);
}

/**
 * The partition of the table that lists every data partition (sort key = the data partition key),
 * so a prefix shorter than its family's partitions is read partition by partition without a Scan.
 */
export const directoryPk = "#partitions";

/** The partition key of one chunk set of a large value (its chunks' sort keys are their indexes). */
export function chunkPk(id: string): string {
  return `#chunk/${id}`;
}

/** The sort key of chunk `i` (zero-padded so chunks list in order). */
export function chunkSk(i: number): string {
  return i.toString().padStart(4, "0");
}

/**
 * How a prefix list reads: `one` when every key under the prefix is in one partition (a Query of
 * it with begins_with on the sort key), `walk` when the prefix is shorter than its partitions (each
 * partition the directory names under the prefix, in order: every key under the prefix is in one
 * of them, and partitions in sort key order hold keys in key order).
 */
export type ListPlan = { kind: "one"; pk: string; skPrefix: string } | { kind: "walk"; dirPrefix: string };

/** The plan for listing `prefix`. */
export function listPlan(prefix: string): ListPlan {
  const { part, full } = partitionOf(prefix);
  // A prefix that reaches its family's depth: its partition is a prefix of every key under it.
  if (full) return { kind: "one", pk: mark + part, skPrefix: mark + prefix.slice(part.length) };
  return { kind: "walk", dirPrefix: mark + prefix };
}

/** Whether `key` is a proxy status record (proxy/<node id>): its item carries a TTL. */
export function isProxyKey(key: string): boolean {
  return key.startsWith(keys.proxyPrefix());
}
