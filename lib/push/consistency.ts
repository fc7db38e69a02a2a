/**
 * Invariants checked before anything is published (go-control-plane's Snapshot.Consistent):
 * every Cluster has its ClusterLoadAssignment, every Listener its RouteConfiguration. Routes naming
 * a cluster nobody publishes are not such a problem: Istio publishes them (Envoy answers 503 NC,
 * while every other route keeps working); the generator answers them UNAVAILABLE at once where it
 * knows (destinationHosts), and they are returned as DanglingRoute records for the flush to log,
 * never refused.
 */
import type { RouteConfiguration } from "../gen/envoy/config/route/v3/route_pb.ts";
import { logSafe } from "../log-safe.ts";
import { xdsTypes } from "../resources/xds-types.ts";

/** Names per type URL generated for one service (a few per type: one per service port). */
export type NamesByType = Map<string, readonly string[]>;

/** What each checked type's names must find in another type: built once, not once per service. */
const referencePairs: readonly (readonly [from: string, to: string])[] = xdsTypes.flatMap((t) =>
  "refersTo" in t ? [[t.typeUrl, t.refersTo] as const] : [],
);

/** Problems found, as sentences; empty when consistent. Only types present in `names` are checked. */
export function checkConsistent(service: string, names: NamesByType): string[] {
  const problems: string[] = [];
  for (const [from, to] of referencePairs) {
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
   * Why the cluster does not exist, when the generator knew (then the route answers UNAVAILABLE at
   * once instead of naming it). Absent: another host's cluster the route names as it is, because
   * the flush could not judge it; it dangles only if the store does not hold it after the flush.
   */
  reason?: string;
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
 * The clusters `routes` name that will not exist: other hosts' clusters `published` does not vouch
 * for (all of them when `published` is absent, for the caller to check once the flush is done),
 * and, should a generator ever name one, an own-host cluster missing from `clusters` (what the
 * service generated for CDS; route-vs.ts answers the own host's dangling destinations itself).
 * Never throws.
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
      if (clusterHost(cluster) !== hostname) {
        if (!published?.(cluster)) out.push({ service, route: rc.name, cluster });
      } else if (!has(cluster)) {
        out.push({ service, route: rc.name, cluster, reason: "the service does not generate that cluster" });
      }
    }
  }
  return out;
}

/** One log line for a dangling route, outside text escaped. */
export function describeDanglingRoute(d: DanglingRoute): string {
  const what = `${logSafe(d.service)}: route ${logSafe(d.route)} names ${logSafe(d.cluster)}`;
  return d.reason !== undefined
    ? `${what} (${logSafe(d.reason)}); calls on it fail UNAVAILABLE at once`
    : `${what} (another host's cluster, not published); calls on it fail UNAVAILABLE once the client stops waiting for it`;
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
