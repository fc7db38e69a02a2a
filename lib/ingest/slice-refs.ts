/**
 * What one slice piece depends on (its pods, the IPs of its endpoints without a pod, its nodes),
 * and the reverse-index changes (lib/ingest/ref-index.ts) that replace one piece's dependencies
 * with another's. A new slice (nothing before) only adds: its dependencies are listed in one walk,
 * its IPs deduplicated as neighbours (a piece's endpoints are sorted by address), not through sets.
 */
import type { SlicePiece } from "../registry/kube/records.ts";
import type { IngestContext } from "./context.ts";
import { type RefChange, type RefOn, updateRefs } from "./ref-index.ts";
import type { ServiceKey } from "./shard-refresh.ts";

/**
 * A piece's dependencies by kind: pods it names ("ns/name"), IPs of endpoints without a pod, and
 * the nodes it was joined with (a piece not joined yet: the nodes its endpoints name).
 */
type Deps = Record<RefOn, Set<string>>;

const noDeps: Deps = { pod: new Set(), ip: new Set(), node: new Set() };

function depsOf(piece: SlicePiece | undefined): Deps {
  if (!piece) return noDeps; // read only
  const out: Deps = { pod: new Set(), ip: new Set(), node: new Set() };
  for (const r of piece.endpoints) {
    if (r.pod) out.pod.add(`${r.pod.namespace}/${r.pod.name}`);
    else out.ip.add(r.address);
    if (!piece.nodes && r.nodeName) out.node.add(r.nodeName);
  }
  for (const n of piece.nodes ?? []) out.node.add(n);
  return out;
}

const refKinds: readonly RefOn[] = ["pod", "ip", "node"];

/**
 * The changes that turn `before`'s entries into `after`'s: per kind (pods, IPs, nodes), the
 * dependencies `before` had and `after` has not go, then the new ones come, each in the order the
 * piece first names it.
 */
export function refChanges(before: SlicePiece | undefined, after: SlicePiece | undefined): RefChange[] {
  if (before === undefined && after !== undefined) {
    const added = additions(after);
    if (added) return added;
  }
  const wanted = depsOf(after);
  const had = depsOf(before);
  const changes: RefChange[] = [];
  for (const on of refKinds) {
    for (const id of had[on]) if (!wanted[on].has(id)) changes.push({ on, id, add: false });
    for (const id of wanted[on]) if (!had[on].has(id)) changes.push({ on, id, add: true });
  }
  return changes;
}

/**
 * refChanges(undefined, piece) in one walk: pods and nodes through a set, IPs kept when they
 * differ from the IP before them. Undefined when the IPs are not in order (then neighbours would
 * not find every repeat): the caller takes the general way.
 */
function additions(piece: SlicePiece): RefChange[] | undefined {
  const pods = new Set<string>();
  const nodes = new Set<string>();
  const ips: RefChange[] = [];
  let last: string | undefined;
  for (const r of piece.endpoints) {
    if (r.pod) pods.add(`${r.pod.namespace}/${r.pod.name}`);
    else if (r.address !== last) {
      if (last !== undefined && r.address < last) return undefined;
      ips.push({ on: "ip", id: r.address, add: true });
      last = r.address;
    }
    if (!piece.nodes && r.nodeName) nodes.add(r.nodeName);
  }
  for (const n of piece.nodes ?? []) nodes.add(n);
  if (pods.size === 0 && nodes.size === 0) return ips;
  const out: RefChange[] = [];
  for (const id of pods) out.push({ on: "pod", id, add: true });
  for (const c of ips) out.push(c);
  for (const id of nodes) out.push({ on: "node", id, add: true });
  return out;
}

/**
 * Replaces a slice's reverse-index entries (lib/ingest/ref-index.ts): those of `before` it no
 * longer has go, new ones come; a slice whose dependencies did not change writes nothing.
 */
export async function reindexSlice(
  ctx: IngestContext,
  svc: ServiceKey,
  slice: string,
  before: SlicePiece | undefined,
  after: SlicePiece | undefined,
): Promise<void> {
  const changes = refChanges(before, after);
  if (changes.length === 0) return;
  await updateRefs(ctx.store, ctx.cluster, [svc.namespace, svc.hostname, slice], changes);
}
