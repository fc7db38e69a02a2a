/**
 * Bucketed store values: many small entries (tuples of names) grouped by a bucket (an IPv4 /24,
 * an IPv6 /64, a pod's owner prefix), one store value per bucket, so a slice of 10 endpoints
 * reads and writes one value instead of 10 keys. A bucket's entries are kept sorted and cut into
 * parts of at most `maxPartChars` characters of names (every name is ASCII by validation; with
 * JSON's quoting a part stays under 1 MiB, far below the Durable Object's 2 MB value limit), so
 * however many entries one bucket gathers, no value passes the limit. Part 0 says how many parts
 * there are. Used by the reverse index (ref-index.ts) and the pod-IP index (pod-ip-index.ts).
 *
 * A part stores its entries flattened into one list of names (`flat`, `width` names an entry), not
 * as a list of tuples: in the memory store every tuple would be an array of its own, a heap object
 * per entry around names the store shares anyway. A part written in the tuple layout (`refs`, by
 * older versions) reads as it is.
 */

import { parseIp } from "../model/ip.ts";
import { inOrder } from "../shards/endpoint-order.ts";
import type { Store } from "../store/index.ts";
import { type PartEntry, splitParts } from "../store/parts.ts";

/** One entry: a tuple of names, the first one the entry's id within its bucket. */
export type BucketEntry = PartEntry;

/** One stored part of a bucket, in either layout; part 0 also says how many parts there are. */
export type BucketPart<E extends BucketEntry> = FlatPart | TuplePart<E>;

/** A part as written: entry i is `flat[i * width]` to `flat[i * width + width - 1]`. */
export interface FlatPart {
  flat: string[];
  width: number;
  parts?: number;
}

/** A part as versions before the flat layout wrote it: one tuple per entry. */
export interface TuplePart<E extends BucketEntry> {
  refs: E[];
  parts?: number;
}

/** The entries of one stored part, in their stored order (read-only: a tuple part's are the store's). */
export function partEntries<E extends BucketEntry>(part: BucketPart<E>): readonly E[] {
  if ("refs" in part) return part.refs;
  const { flat, width } = part;
  const out: E[] = [];
  if (!(width >= 1)) return out; // only a damaged value: never loop on it
  for (let at = 0; at < flat.length; at += width) out.push(flat.slice(at, at + width) as unknown as E);
  return out;
}

/** One part's entries flattened (every entry of `width` names), in an array of its exact length. */
function flatten(entries: readonly BucketEntry[], width: number): string[] {
  const flat = new Array<string>(entries.length * width);
  let at = 0;
  for (const e of entries) {
    if (e.length !== width)
      throw new TypeError(`bucket: an entry of ${e.length} names among entries of ${width}`);
    for (let j = 0; j < width; j++) flat[at++] = e[j] as string;
  }
  return flat;
}

/** The key of part `part` of one bucket. */
export type PartKey = (part: number) => string;

/** The bucket of an IP address: its IPv4 /24 or IPv6 /64 (the address itself when it does not parse). */
export function ipBucket(ip: string): string {
  if (!ip.includes(":")) {
    const dot = ip.lastIndexOf(".");
    return dot < 0 ? ip : ip.slice(0, dot);
  }
  const parsed = parseIp(ip);
  if (!parsed.ok) return ip;
  let out = "";
  for (let i = 0; i < 8; i++) out += parsed.bytes[i]?.toString(16).padStart(2, "0");
  return out;
}

/** Every entry of one bucket whose part 0 is `first` (already read), and how many parts hold them. */
export async function readRest<E extends BucketEntry>(
  store: Store,
  partKey: PartKey,
  first: BucketPart<E> | undefined,
): Promise<{ refs: readonly E[]; parts: number }> {
  if (!first) return { refs: [], parts: 0 };
  const parts = first.parts ?? 1;
  if (parts === 1) return { refs: partEntries(first), parts };
  const rest = Array.from({ length: parts - 1 }, (_, i) => partKey(i + 1));
  const got = await store.getMany<BucketPart<E>>(rest);
  const refs = [...partEntries(first)];
  for (const key of rest) {
    const part = got.get(key)?.value;
    if (part) for (const e of partEntries(part)) refs.push(e);
  }
  return { refs, parts };
}

/** Every entry of one bucket (read-only), and how many parts hold them. */
export async function readParts<E extends BucketEntry>(
  store: Store,
  partKey: PartKey,
): Promise<{ refs: readonly E[]; parts: number }> {
  return readRest(store, partKey, (await store.get<BucketPart<E>>(partKey(0)))?.value);
}

/** Orders entries name by name (code points, as keys are ordered). */
export function compareEntries(a: BucketEntry, b: BucketEntry): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Writes a bucket's entries (sorted here, in place) over its `before` parts; no entries deletes it. */
export async function writeParts<E extends BucketEntry>(
  store: Store,
  partKey: PartKey,
  refs: E[],
  before: number,
): Promise<void> {
  // A bucket's kept entries are in order and a slice's new ones mostly come in order too.
  if (!inOrder(refs, compareEntries)) refs.sort(compareEntries);
  const parts = splitParts(refs);
  const width = refs[0]?.length ?? 0;
  for (const [i, part] of parts.entries()) {
    const flat = flatten(part, width);
    const value: FlatPart =
      i === 0 && parts.length > 1 ? { flat, width, parts: parts.length } : { flat, width };
    await store.put(partKey(i), value);
  }
  for (let i = parts.length; i < before; i++) await store.delete(partKey(i));
}
