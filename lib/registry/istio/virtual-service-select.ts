/**
 * Which VirtualService a service host gets for proxies of a namespace, as istiod decides it for
 * sidecars and proxyless clients: the mesh-bound VirtualServices visible to the namespace in
 * virtualServiceIndex order (private to the namespace, then exported to it, then public; each
 * oldest first), kept only when the Sidecar imports them; then, for a host, the first one naming it
 * exactly, else the first one with the most specific wildcard covering it
 * (computeWildcardHostVirtualServiceIndex + MostSpecificHostMatch). One VirtualService per host:
 * istiod does not merge VirtualServices for sidecars (a later duplicate host is dropped).
 * Delegate VirtualServices (no hosts) are not served on their own; root delegation is unsupported.
 * The services the imported VirtualServices route to join a Sidecar's scope (importedDestinations),
 * judged from compact import records the view table keeps (toVirtualServiceImport).
 */
import { byCreation } from "./config-meta.ts";
import { importsVirtualService, type SidecarModel } from "./sidecar.ts";
import type { VirtualServiceModel } from "./virtual-service.ts";
import { exportedTo, isWildcard, mostSpecificHostMatch } from "./visibility.ts";

/** The VirtualServices proxies of `proxyNamespace` use, in istiod's precedence order. */
export function virtualServicesFor(
  all: readonly VirtualServiceModel[],
  proxyNamespace: string,
  sidecar?: SidecarModel,
): VirtualServiceModel[] {
  const sorted = all.filter((vs) => vs.appliesToMesh && vs.hosts.length > 0).sort(byCreation);
  const own: VirtualServiceModel[] = [];
  const exported: VirtualServiceModel[] = [];
  const pub: VirtualServiceModel[] = [];
  for (const vs of sorted) {
    const e = vs.exportTo;
    if (e.length === 0 || e.includes("*")) pub.push(vs);
    else if (e.includes("~")) continue;
    else if (vs.namespace === proxyNamespace && (e.includes(".") || e.includes(proxyNamespace))) own.push(vs);
    else if (e.includes(proxyNamespace)) exported.push(vs);
  }
  const seen = new Set<VirtualServiceModel>();
  const out: VirtualServiceModel[] = [];
  for (const vs of [...own, ...exported, ...pub]) {
    if (seen.has(vs)) continue;
    seen.add(vs);
    if (!sidecar || importsVirtualService(sidecar, proxyNamespace, vs.namespace, vs.hosts)) out.push(vs);
  }
  return out;
}

/** An index from host to the VirtualService that wins it, built once per ordered list. */
export interface VirtualServiceHostIndex {
  /** The VirtualService whose routes `hostname` (a service host, exact or wildcard) gets, if any. */
  forHost(hostname: string): VirtualServiceModel | undefined;
}

/** Builds the host index over `ordered` (as virtualServicesFor returns it): first VirtualService wins a host. */
export function createVirtualServiceHostIndex(
  ordered: readonly VirtualServiceModel[],
): VirtualServiceHostIndex {
  const exact = new Map<string, VirtualServiceModel>();
  const wildcard = new Map<string, VirtualServiceModel>();
  for (const vs of ordered)
    for (const h of vs.hosts) {
      const m = isWildcard(h) ? wildcard : exact;
      if (!m.has(h)) m.set(h, vs);
    }
  return { forHost: (hostname) => mostSpecificHostMatch(hostname, exact, wildcard)?.value };
}

/**
 * The hosts the VirtualServices route to (collectImportedServices): istiod adds these services to a
 * Sidecar-scoped view even when the egress hosts do not name them. Sorted, unique.
 */
export function destinationHosts(vss: readonly VirtualServiceModel[]): string[] {
  const out = new Set<string>();
  for (const vs of vss)
    for (const r of vs.http)
      if (r.action.kind === "route") for (const d of r.action.destinations) out.add(d.host);
  return [...out].sort();
}

/** What a Sidecar scope needs of a VirtualService to import it and the services it routes to. */
export interface VirtualServiceImport {
  namespace: string;
  /** Resolved hosts (wildcards kept). */
  hosts: string[];
  /** exportTo as written; absent: public. */
  exportTo?: string[];
  /** The hosts its HTTP routes send to, resolved, sorted, unique. */
  destinations: string[];
}

/**
 * The import record of a mesh-bound VirtualService with hosts and at least one route destination;
 * undefined for any other (a gateway-only or delegate VirtualService imports nothing into a sidecar).
 */
export function toVirtualServiceImport(vs: VirtualServiceModel): VirtualServiceImport | undefined {
  if (!vs.appliesToMesh || vs.hosts.length === 0) return undefined;
  const destinations = destinationHosts([vs]);
  if (destinations.length === 0) return undefined;
  return {
    namespace: vs.namespace,
    hosts: [...vs.hosts],
    ...(vs.exportTo.length > 0 && !vs.exportTo.includes("*") && { exportTo: [...vs.exportTo] }),
    destinations,
  };
}

/**
 * collectImportedServices: the destination hosts of every VirtualService exported to
 * `proxyNamespace` and imported by `sidecar`'s egress hosts (SelectVirtualServices). A service with
 * one of these hostnames is in the scope even when the egress hosts leave it out. Wider than istiod
 * where it is finer, never narrower: every route's destinations count (istiod skips routes whose
 * `sourceNamespace` names another namespace), and a host's service of any namespace exported to the
 * proxy counts (istiod picks one: the proxy's namespace, else the first alphabetically).
 */
export function importedDestinations(
  vss: readonly VirtualServiceImport[],
  sidecar: SidecarModel,
  proxyNamespace: string,
): Set<string> {
  const out = new Set<string>();
  for (const vs of vss) {
    if (!exportedTo(vs.exportTo, vs.namespace, proxyNamespace)) continue;
    if (!importsVirtualService(sidecar, proxyNamespace, vs.namespace, vs.hosts)) continue;
    for (const d of vs.destinations) out.add(d);
  }
  return out;
}
