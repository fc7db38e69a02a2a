/**
 * Per-object ordering: the last resourceVersion seen of every object, so a replayed or older
 * event changes nothing. resourceVersions are etcd revisions: numeric and increasing within a
 * cluster, which is what the API server guarantees in practice though it calls them opaque.
 * Records live under keys.object(); applyEvent (apply.ts) reads and writes them.
 */

/** What ingest remembers of one object. `data` is what its kind needs to undo it later. */
export interface ObjectRecord {
  resourceVersion: string;
  uid: string;
  /** A tombstone: the object was deleted at `resourceVersion`. */
  deleted: boolean;
  data?: Record<string, string>;
  /**
   * The version at `resourceVersion` was refused by its kind's rules (lib/ingest/rejected.ts): what
   * `data` describes (if anything) is the last valid version, still served.
   */
  rejected?: { field: string; message: string };
}

/** Orders two resourceVersions; undefined when either is not a decimal number (no order known). */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Whether an event carrying `incoming` is news given what was recorded: no record, no known
 * order, or a strictly newer version. Equal or older ▶ a replay or a reordering: skip it.
 */
export function isNewer(recorded: ObjectRecord | undefined, incoming: string): boolean {
  if (!recorded || incoming === "" || recorded.resourceVersion === "") return true;
  const c = compareResourceVersions(incoming, recorded.resourceVersion);
  return c === undefined ? incoming !== recorded.resourceVersion : c > 0;
}
