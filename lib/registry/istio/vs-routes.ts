/**
 * A VirtualService's routes as a listener port takes them (BuildHTTPRoutesForVirtualService: the
 * (route, match) pairs in order, up to the first catch-all) and the cluster a destination names
 * (GetDestinationCluster): what the proxyless and the sidecar route generators and the dangling
 * check read of a normalized VirtualService (virtual-service.ts).
 */
import { destinationPort } from "./route-destinations.ts";
import type { HttpRoute, RouteDestination, RouteMatch, VirtualServiceModel } from "./virtual-service.ts";

/** One route as Envoy (and gRPC) gets it: an HTTP route with one of its matches, or none. */
export interface FlatRoute {
  route: HttpRoute;
  match?: RouteMatch;
}

/**
 * BuildHTTPRoutesForVirtualService for one listener port: each (route, match) pair in order, matches
 * bound to another port skipped, and nothing after the first catch-all (a route without matches, or
 * a match on any path with no other condition), since nothing after it could match.
 */
export function routesForPort(vs: VirtualServiceModel, port: number): FlatRoute[] {
  const out: FlatRoute[] = [];
  for (const route of vs.http) {
    if (route.matches.length === 0) {
      out.push({ route });
      return out;
    }
    for (const match of route.matches) {
      if (match.port !== undefined && match.port !== port) continue;
      out.push({ route, match });
      if (isCatchAll(match)) return out;
    }
  }
  return out;
}

function isCatchAll(m: RouteMatch): boolean {
  const anyPath =
    !m.path ||
    (m.path.kind === "prefix" && m.path.value === "/") ||
    (m.path.kind === "regex" && m.path.value === "*");
  return anyPath && m.headers.length === 0 && m.ignored.length === 0;
}

/**
 * GetDestinationCluster: `outbound|<port>|<subset>|<host>`, the port being the destination's, else
 * the service's only port, else the listener's.
 */
export function destinationCluster(
  d: RouteDestination,
  listenerPort: number,
  servicePorts?: readonly number[],
): string {
  return `outbound|${destinationPort(d, listenerPort, servicePorts)}|${d.subset ?? ""}|${d.host}`;
}
