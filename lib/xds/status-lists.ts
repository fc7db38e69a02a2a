/**
 * The lists a stream's status carries (subscribed names, sent versions), whole or cut. status()
 * lists everything, sorted; what a session reports after each ACK/NACK (onStatus) lists at most
 * a bound of each, with the full count beside it: a status page is bounded anyway (proxy-record.ts),
 * and sorting what a whole-mesh subscriber holds on every ACK would cost what it holds, not what
 * changed.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { ProxyStatus, ProxyTypeStatus } from "../resources/types.ts";
import { pushOrder, type TypeUrl } from "../resources/xds-types.ts";
import { nodeGenerator, nodeLabels } from "./node-meta.ts";

/** Lists up to this long are sorted by insertion, in place: no work array (Array.prototype.sort allocates ~1 KB). */
const insertionMax = 16;

/** `xs` sorted in place (default order); a short list without sort's own work arrays (a status is built per stream). */
function sorted(xs: string[]): string[] {
  if (xs.length > insertionMax) return xs.sort();
  for (let i = 1; i < xs.length; i++) {
    const x = xs[i] as string;
    let j = i - 1;
    for (; j >= 0 && (xs[j] as string) > x; j--) xs[j + 1] = xs[j] as string;
    xs[j + 1] = x;
  }
  return xs;
}

/** The first `bound` items of `items` (all of them, in order, when fewer). */
function take<T>(items: Iterable<T>, bound: number): T[] {
  const out: T[] = [];
  if (bound <= 0) return out;
  for (const item of items) {
    out.push(item);
    if (out.length >= bound) break;
  }
  return out;
}

/**
 * The subscribed names and sent versions of one type: sorted and complete when each list has at
 * most `bound` entries; else its first `bound` entries (in the order the session holds them) and
 * `subscribedCount`/`sentCount` give the full sizes. Costs O(bound) for lists over the bound.
 */
export function statusLists(
  names: ReadonlySet<string>,
  versions: ReadonlyMap<string, string> | undefined,
  bound = Number.POSITIVE_INFINITY,
): Pick<ProxyTypeStatus, "subscribed" | "subscribedCount" | "sentCount"> & {
  versions?: Record<string, string>;
} {
  const out: ReturnType<typeof statusLists> = {
    subscribed: names.size <= bound ? sorted([...names]) : take(names, bound),
  };
  if (names.size > bound) out.subscribedCount = names.size;
  if (versions) {
    // Names only, sorted (or the first `bound`), then their versions: no [name, version] pair per entry.
    const listed = versions.size <= bound ? sorted([...versions.keys()]) : take(versions.keys(), bound);
    const record: Record<string, string> = {};
    for (let i = 0; i < listed.length; i++) {
      const name = listed[i] as string;
      record[name] = versions.get(name) as string;
    }
    out.versions = record;
    if (versions.size > bound) out.sentCount = versions.size;
  }
  return out;
}

/**
 * A session's status (SotW or Delta): its node's id, generator and labels, and one status per type
 * state, in push order (then by type URL), each built by `typeStatus`. One type (a sidecar's EDS
 * stream, say) needs no sort and its work array: a status is built per record written.
 */
export function streamStatus<S extends { typeUrl: string }>(
  node: Node | undefined,
  states: Iterable<S>,
  typeStatus: (state: S) => ProxyTypeStatus,
): ProxyStatus {
  const list = [...states];
  if (list.length > 1)
    list.sort((a, b) => pushRank(a.typeUrl) - pushRank(b.typeUrl) || (a.typeUrl < b.typeUrl ? -1 : 1));
  const types = list.map(typeStatus);
  return { nodeId: node?.id ?? "", generator: nodeGenerator(node), ...nodeLabels(node), types };
}

/** A type URL's place in pushOrder; types it does not list come after. */
function pushRank(typeUrl: string): number {
  const i = pushOrder.indexOf(typeUrl as TypeUrl);
  return i < 0 ? pushOrder.length : i;
}
