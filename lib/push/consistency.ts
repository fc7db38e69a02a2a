/**
 * Invariants checked before anything is published (go-control-plane's Snapshot.Consistent):
 * every Cluster has its ClusterLoadAssignment, every Listener its RouteConfiguration.
 */
import { TypeUrl } from "../xds/types.ts";

/** Names per type URL generated for one service. */
export type NamesByType = Map<string, Set<string>>;

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
    for (const name of names.get(from) ?? []) {
      if (!targets.has(name))
        problems.push(`${service}: ${short(from)} ${name} has no ${short(to)} of that name`);
    }
  }
  return problems;
}

function short(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}
