/**
 * Invariants checked before anything is published (go-control-plane's Snapshot.Consistent):
 * every Cluster has its ClusterLoadAssignment, every Listener its RouteConfiguration.
 */
import { TypeUrl } from "../xds/types.ts";

/** Names per type URL generated for one service (a few per type: one per service port). */
export type NamesByType = Map<string, readonly string[]>;

/** Problems found, as sentences; empty when consistent. Only types present in `names` are checked. */
export function checkConsistent(service: string, names: NamesByType): string[] {
  const problems: string[] = [];
  const pairs: [from: string, to: string][] = [
    [TypeUrl.cluster, TypeUrl.endpoint],
    [TypeUrl.listener, TypeUrl.route],
  ];
  for (const [from, to] of pairs) {
    const targets = names.get(to);
    if (!targets) continue;
    const has = contains(targets);
    for (const name of names.get(from) ?? []) {
      if (!has(name)) problems.push(`${service}: ${short(from)} ${name} has no ${short(to)} of that name`);
    }
  }
  return problems;
}

/** Membership in `names`: a scan for the usual handful, a Set past that. */
function contains(names: readonly string[]): (name: string) => boolean {
  if (names.length <= 16) return (name) => names.includes(name);
  const set = new Set(names);
  return (name) => set.has(name);
}

function short(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}
