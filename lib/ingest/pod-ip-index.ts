/**
 * Which pod holds an IP, for the endpoints that name no pod (istiod finds their pod by IP, its
 * podsByIP). Kept in buckets (buckets.ts), one store value per IPv4 /24 or IPv6 /64 holding
 * [ip, namespace, name] for every IP a pod holds: joining a slice of 10 endpoints reads one value
 * instead of one key per endpoint, and a Pod change rewrites the bucket of each of its IPs. An IP
 * held by two pods (a terminated pod's IP reused before its delete arrived) belongs to the pod that
 * claimed it last; a pod letting an IP go removes it only while it still holds it.
 *
 * A store written by an older version keeps one key per IP (keys.podIp): the first ingest batch
 * moves them into buckets (`migrateUnbucketedPodIps`, inside that batch's all-or-nothing commit).
 */
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";
import { type BucketPart, ipBucket, type PartKey, readParts, readRest, writeParts } from "./buckets.ts";

/** One IP of one pod: [ip, namespace, name]. */
export type PodIpEntry = [ip: string, namespace: string, name: string];

/** One stored part of a pod-IP bucket. */
export type PodIpBucketPart = BucketPart<PodIpEntry>;

/** A pod by namespace and name. */
export interface PodRef {
  namespace: string;
  name: string;
}

const partKeyOf =
  (cluster: string, bucket: string): PartKey =>
  (part) =>
    keys.podIpBucket(cluster, bucket, part);

/** The IPs asked for, by bucket. */
function byBucket(ips: Iterable<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const ip of ips) {
    const bucket = ipBucket(ip);
    const set = out.get(bucket);
    if (set) set.add(ip);
    else out.set(bucket, new Set([ip]));
  }
  return out;
}

/**
 * The pod holding each of `ips` that a pod holds: one `get` when the IPs share a bucket (a slice's
 * endpoints usually do), else one read for every bucket's first part; more only for buckets
 * spread over several parts. `ips` may be a list with repeats: a set of them is built only when a
 * bucket holds any IP (a slice's IPs are not hashed for an empty bucket).
 */
export async function podsByIp(
  store: Store,
  cluster: string,
  ips: ReadonlySet<string> | readonly string[],
): Promise<Map<string, PodRef>> {
  const out = new Map<string, PodRef>();
  let only: string | undefined;
  for (const ip of ips) {
    const bucket = ipBucket(ip);
    if (only === undefined) only = bucket;
    else if (bucket !== only) return podsByIpIn(store, cluster, byBucket(ips), out);
  }
  if (only === undefined) return out;
  const partKey = partKeyOf(cluster, only);
  const first = (await store.get<PodIpBucketPart>(partKey(0)))?.value;
  if (first)
    collect(out, (await readRest(store, partKey, first)).refs, ips instanceof Set ? ips : new Set(ips));
  return out;
}

/** podsByIp over several buckets: their first parts in one getMany. */
async function podsByIpIn(
  store: Store,
  cluster: string,
  wanted: Map<string, Set<string>>,
  out: Map<string, PodRef>,
): Promise<Map<string, PodRef>> {
  const firstKeys = [...wanted.keys()].map((bucket) => keys.podIpBucket(cluster, bucket, 0));
  const firsts = await store.getMany<PodIpBucketPart>(firstKeys);
  let i = 0;
  for (const [bucket, asked] of wanted) {
    const first = firsts.get(firstKeys[i++] as string)?.value;
    if (first) collect(out, (await readRest(store, partKeyOf(cluster, bucket), first)).refs, asked);
  }
  return out;
}

function collect(out: Map<string, PodRef>, refs: readonly PodIpEntry[], asked: ReadonlySet<string>): void {
  for (const [ip, namespace, name] of refs) if (asked.has(ip)) out.set(ip, { namespace, name });
}

/**
 * Moves `pod`'s IPs from `before` to `after`: an IP it no longer has leaves its bucket (only
 * while this pod holds it), every IP it has is claimed by it. Each bucket touched is read once and
 * written once, and only when it changed.
 */
export async function setPodIps(
  store: Store,
  cluster: string,
  pod: PodRef,
  before: readonly string[],
  after: readonly string[],
): Promise<void> {
  const kept = new Set(after);
  const holds = (e: PodIpEntry | undefined) => e !== undefined && e[1] === pod.namespace && e[2] === pod.name;
  for (const [bucket, ips] of byBucket([...before, ...after])) {
    const partKey = partKeyOf(cluster, bucket);
    const { refs, parts } = await readParts<PodIpEntry>(store, partKey);
    const next = new Map(refs.map((e) => [e[0], e]));
    let changed = false;
    for (const ip of ips) {
      const held = next.get(ip);
      if (!kept.has(ip)) {
        if (holds(held)) {
          next.delete(ip);
          changed = true;
        }
      } else if (!holds(held)) {
        next.set(ip, [ip, pod.namespace, pod.name]);
        changed = true;
      }
    }
    if (changed) await writeParts(store, partKey, [...next.values()], parts);
  }
}

/**
 * Moves the one-key-per-IP entries an older version wrote (keys.podIp) into buckets and deletes
 * them; an IP a bucket already holds keeps the bucket's pod. Returns how many keys it moved; a
 * store without any costs one empty listing.
 */
export async function migrateUnbucketedPodIps(store: Store): Promise<number> {
  const legacy = await listAll<PodRef>(store, keys.podIpsUnbucketed());
  if (legacy.length === 0) return 0;
  const buckets = new Map<string, { cluster: string; bucket: string; entries: PodIpEntry[] }>();
  for (const e of legacy) {
    const parts = e.key.split("/");
    if (parts.length === 3) {
      const cluster = decodeSegment(parts[1] as string);
      const ip = decodeSegment(parts[2] as string);
      const bucket = ipBucket(ip);
      const k = `${cluster}\n${bucket}`;
      const group = buckets.get(k) ?? buckets.set(k, { cluster, bucket, entries: [] }).get(k);
      group?.entries.push([ip, e.value.namespace, e.value.name]);
    }
    await store.delete(e.key);
  }
  for (const { cluster, bucket, entries } of buckets.values()) {
    const partKey = partKeyOf(cluster, bucket);
    const { refs, parts } = await readParts<PodIpEntry>(store, partKey);
    const next = new Map(entries.map((e) => [e[0], e]));
    for (const e of refs) next.set(e[0], e);
    await writeParts(store, partKey, [...next.values()], parts);
  }
  return legacy.length;
}
