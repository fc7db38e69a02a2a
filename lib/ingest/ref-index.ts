/**
 * The reverse index from what an endpoint depends on (its pod, or its IP when it names no pod,
 * and its node) to the slices that depend on it, so a Pod or Node event recomputes only the
 * shards it touches. Pods and IPs, one per endpoint, are grouped in buckets, one store value
 * each: an IPv4 /24, an IPv6 /64, a pod's namespace and owner prefix (its name up to the last
 * "-": the pods of one ReplicaSet or StatefulSet). A slice of 10 endpoints usually touches one or
 * two buckets, not 10+ keys; a Pod arrival reads one bucket per IP and one for its name. Nodes,
 * a few per slice but each named by a large share of all slices, keep one key per node and slice
 * (keys.ref): a bucket per node would be rewritten whole by every slice change on that node.
 *
 * Bound: a bucket holds every (dependency, slice) pair of its group, so its size grows with the
 * slices naming its addresses (at most 256 addresses per IPv4 bucket, but any number of slices
 * per address). A value is cut into parts of at most `maxPartChars` characters of names
 * (every name is ASCII by validation; with JSON's quoting a part stays under 1 MiB, far below
 * the Durable Object's 2 MB value limit), so no bucket ever produces a value past the limit.
 */
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";
import { type BucketPart, ipBucket, readParts, writeParts } from "./buckets.ts";

/** What an endpoint depends on. */
export type RefOn = "pod" | "ip" | "node";

/** The dependencies kept in buckets. */
export type BucketOn = "pod" | "ip";

/** One dependency of one slice: [dependency id, namespace, hostname, slice]. */
export type RefEntry = [id: string, namespace: string, hostname: string, slice: string];

/** One stored part of a bucket; part 0 also says how many parts there are. */
export type RefBucketPart = BucketPart<RefEntry>;

/** The bucket a dependency belongs to. */
export function bucketOf(on: BucketOn, id: string): string {
  if (on === "pod") {
    const slash = id.indexOf("/");
    const dash = id.lastIndexOf("-");
    return dash > slash ? id.slice(0, dash) : id;
  }
  return ipBucket(id);
}

/** Every entry of one bucket (read-only), and how many parts hold them. */
export function readBucket(
  store: Store,
  on: BucketOn,
  cluster: string,
  bucket: string,
): Promise<{ refs: readonly RefEntry[]; parts: number }> {
  return readParts<RefEntry>(store, (part) => keys.refBucket(on, cluster, bucket, part));
}

/** A dependency change of one slice: what it adds and what it drops, by bucket. */
export interface RefChange {
  on: RefOn;
  id: string;
  add: boolean;
}

/**
 * Applies one slice's dependency changes: each touched bucket is read once and written once.
 * `slice` is [namespace, hostname, slice name]; `changes` name each dependency once (as
 * slice-refs.ts refChanges lists them).
 */
export async function updateRefs(
  store: Store,
  cluster: string,
  slice: readonly [string, string, string],
  changes: readonly RefChange[],
): Promise<void> {
  const [ns, host, name] = slice;
  const byBucket = new Map<string, { on: BucketOn; bucket: string; changes: RefChange[] }>();
  // A slice's IPs mostly share one bucket and come in order: a change in the bucket of the one
  // before it joins that group without a lookup.
  let last: { on: BucketOn; bucket: string; changes: RefChange[] } | undefined;
  for (const c of changes) {
    if (c.on === "node") {
      const key = keys.ref("node", cluster, c.id, ns, host, name);
      if (c.add) await store.put(key, { namespace: ns, hostname: host });
      else await store.delete(key);
      continue;
    }
    const bucket = bucketOf(c.on, c.id);
    if (last === undefined || last.on !== c.on || last.bucket !== bucket) {
      const k = `${c.on}\n${bucket}`;
      last = byBucket.get(k) ?? byBucket.set(k, { on: c.on, bucket, changes: [] }).get(k);
    }
    last?.changes.push(c);
  }
  for (const { on, bucket, changes: cs } of byBucket.values()) {
    const { refs, parts } = await readBucket(store, on, cluster, bucket);
    const dropped = cs.some((c) => !c.add) ? new Set(cs.filter((c) => !c.add).map((c) => c.id)) : undefined;
    // One pass: the bucket's entries minus this slice's dropped ones, then its new ones.
    const next: RefEntry[] = [];
    const present = new Set<string>();
    let changed = false;
    for (const e of refs) {
      if (e[3] === name && e[2] === host && e[1] === ns) {
        if (dropped?.has(e[0])) {
          changed = true;
          continue;
        }
        present.add(e[0]);
      }
      next.push(e);
    }
    // The slice in the bucket already: what it has is not added again. Not yet (a new slice's
    // bucket): every addition is new, and `changes` name each once, so no set of ids is built.
    const had = present.size > 0;
    for (const c of cs) {
      if (!c.add) continue;
      if (had) {
        if (present.has(c.id)) continue;
        present.add(c.id);
      }
      next.push([c.id, ns, host, name]);
      changed = true;
    }
    if (changed) await writeParts(store, (part) => keys.refBucket(on, cluster, bucket, part), next, parts);
  }
}

/** The slices (namespace, hostname, slice name) that depend on any of `deps`: one read per bucket or node. */
export async function refsOf(
  store: Store,
  cluster: string,
  deps: readonly { on: RefOn; id: string }[],
): Promise<{ namespace: string; hostname: string; slice: string }[]> {
  const out: { namespace: string; hostname: string; slice: string }[] = [];
  const wanted = new Map<string, { on: BucketOn; bucket: string; ids: Set<string> }>();
  for (const d of deps) {
    if (d.on === "node") {
      const prefix = keys.refPrefix("node", cluster, d.id);
      for (const e of await listAll<{ namespace: string; hostname: string }>(store, prefix)) {
        const slice = decodeSegment(e.key.slice(e.key.lastIndexOf("/") + 1));
        out.push({ namespace: e.value.namespace, hostname: e.value.hostname, slice });
      }
      continue;
    }
    const bucket = bucketOf(d.on, d.id);
    const k = `${d.on}\n${bucket}`;
    const group = wanted.get(k) ?? wanted.set(k, { on: d.on, bucket, ids: new Set() }).get(k);
    group?.ids.add(d.id);
  }
  for (const { on, bucket, ids } of wanted.values()) {
    for (const e of (await readBucket(store, on, cluster, bucket)).refs) {
      if (ids.has(e[0])) out.push({ namespace: e[1], hostname: e[2], slice: e[3] });
    }
  }
  return out;
}

/**
 * Rewrites the pod and IP entries of the previous layout (keys.ref: one key per dependency and
 * slice, written by older versions into a durable store) into buckets and deletes them; node
 * entries keep that layout. Returns how many keys it moved; a store without any costs two empty
 * listings.
 */
export async function migrateLegacyRefs(store: Store): Promise<number> {
  const legacy = [
    ...(await listAll<{ namespace: string; hostname: string }>(store, keys.refsOn("pod"))),
    ...(await listAll<{ namespace: string; hostname: string }>(store, keys.refsOn("ip"))),
  ];
  if (legacy.length === 0) return 0;
  const bySlice = new Map<
    string,
    { cluster: string; slice: [string, string, string]; changes: RefChange[] }
  >();
  for (const e of legacy) {
    const parsed = parseLegacyKey(e.key);
    if (parsed) {
      const k = `${parsed.cluster}\n${parsed.slice.join("\n")}`;
      const group = bySlice.get(k) ?? bySlice.set(k, { ...parsed, changes: [] }).get(k);
      group?.changes.push({ on: parsed.on, id: parsed.id, add: true });
    }
    await store.delete(e.key);
  }
  for (const g of bySlice.values()) await updateRefs(store, g.cluster, g.slice, g.changes);
  return legacy.length;
}

/** ref/<on>/<cluster>/<id: one segment, or namespace/name for a pod>/<ns>/<host>/<slice>. */
function parseLegacyKey(
  key: string,
): { on: BucketOn; cluster: string; id: string; slice: [string, string, string] } | undefined {
  const parts = key.split("/");
  const on = parts[1];
  const idSegments = on === "pod" ? 2 : 1;
  if ((on !== "pod" && on !== "ip") || parts.length !== 6 + idSegments) return undefined;
  const d = parts.map(decodeSegment);
  const id = d.slice(3, 3 + idSegments).join("/");
  const [ns, host, slice] = d.slice(3 + idSegments) as [string, string, string];
  return { on, cluster: d[2] as string, id, slice: [ns, host, slice] };
}
