/**
 * Invariants checked before anything is published (go-control-plane's Snapshot.Consistent):
 * every Cluster has its ClusterLoadAssignment, every Listener its RouteConfiguration. Routes naming
 * a cluster nobody publishes are not such a problem: Istio publishes them (Envoy answers 503 NC,
 * gRPC fails those calls with UNAVAILABLE while every other route keeps working), so they are
 * returned as DanglingRoute records for the flush to log and summarise, never refused.
 */
import type { RouteConfiguration } from "../gen/envoy/config/route/v3/route_pb.ts";
import { logSafe } from "../log-safe.ts";
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

/** A route that names a cluster the push does not publish (valid in Istio; the calls fail UNAVAILABLE). */
export interface DanglingRoute {
  /** `<namespace>/<hostname>` of the service whose RouteConfiguration it is. */
  service: string;
  /** The RouteConfiguration name (`<host>:<port>`). */
  route: string;
  /** The cluster named (`outbound|<port>|<subset>|<host>`). */
  cluster: string;
  /**
   * `own`: a cluster of the service's own host that it did not generate (a subset its
   * DestinationRule lacks, a port it does not have). `other`: another host's cluster that
   * `published` did not vouch for (every such reference when no `published` was given).
   */
  kind: "own" | "other";
}

/** Every cluster a RouteConfiguration's routes name (single and weighted), in order, unique. */
export function routeClusters(rc: RouteConfiguration): string[] {
  const out: string[] = [];
  const add = (name: string) => {
    if (!out.includes(name)) out.push(name);
  };
  for (const vh of rc.virtualHosts) {
    for (const r of vh.routes) {
      if (r.action.case !== "route") continue;
      const spec = r.action.value.clusterSpecifier;
      if (spec.case === "cluster") add(spec.value);
      else if (spec.case === "weightedClusters") for (const c of spec.value.clusters) add(c.name);
    }
  }
  return out;
}

/**
 * The routes of one service naming clusters that will not exist: its own host's clusters missing
 * from `clusters` (what it generated for CDS), and other hosts' clusters `published` does not know
 * (all of them when `published` is absent, for the caller to check). Never throws.
 */
export function findDanglingRoutes(
  service: string,
  hostname: string,
  routes: readonly RouteConfiguration[],
  clusters: readonly string[],
  published?: (cluster: string) => boolean,
): DanglingRoute[] {
  const has = contains(clusters);
  const out: DanglingRoute[] = [];
  for (const rc of routes) {
    for (const cluster of routeClusters(rc)) {
      const own = clusterHost(cluster) === hostname;
      if (own ? has(cluster) : published?.(cluster)) continue;
      out.push({ service, route: rc.name, cluster, kind: own ? "own" : "other" });
    }
  }
  return out;
}

/** One log line for a dangling route, outside text escaped. */
export function describeDanglingRoute(d: DanglingRoute): string {
  const why =
    d.kind === "own" ? "a cluster the service does not generate" : "another host's cluster not published";
  return `${logSafe(d.service)}: route ${logSafe(d.route)} names ${logSafe(d.cluster)} (${why}); calls on it fail UNAVAILABLE`;
}

/** The host of `outbound|<port>|<subset>|<host>` (everything after the third `|`), or "" for another form. */
function clusterHost(cluster: string): string {
  let at = -1;
  for (let i = 0; i < 3; i++) {
    at = cluster.indexOf("|", at + 1);
    if (at < 0) return "";
  }
  return cluster.slice(at + 1);
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
