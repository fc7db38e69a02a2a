/**
 * The services a push re-plans so the per-namespace views re-judge them (lib/push/views.ts), beyond
 * the services its configs name. A Sidecar regenerates no shared resource, but which VirtualServices
 * it imports decides the overlays of every host a VirtualService names, and an overlay it leaves
 * behind must go: a Sidecar change re-plans those hosts' services and every service with an overlay.
 * A VirtualService change, while a Sidecar is recorded, re-plans the services it routes to: they may
 * have just become visible to a Sidecar's namespace (importedDestinations) with overlays of their own.
 * Re-planning a service whose shared resources did not change publishes nothing shared.
 */
import { kubeServiceNamespace, type PushRequest, parseConfigKey, type Service } from "../model/index.ts";
import { destinationHosts } from "../registry/istio/virtual-service-select.ts";
import { hostMatches, isWildcard } from "../registry/istio/visibility.ts";
import type { RoutingConfigs } from "../resources/istio-configs.ts";
import type { ViewTable } from "../resources/view-table.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import type { ServiceRef } from "./scope.ts";

/** What widening needs: the flush's routing configs and the view table as the last flush wrote it. */
export interface ViewScopeDeps {
  store: Store;
  routing: RoutingConfigs | undefined;
  /** The stored view table (undefined: none yet). */
  table: ViewTable | undefined;
  /** Whether this flush's Sidecars are non-empty (the table may predate them). */
  hasSidecars: boolean;
  domainSuffix: string;
}

/**
 * `refs` and the services the views must re-judge for `request` (see the module comment), sorted as
 * servicesInScope sorts. Unknown scope, an incremental push, or nothing to add: `refs` itself.
 */
export async function widenForViews(
  deps: ViewScopeDeps,
  request: PushRequest,
  refs: ServiceRef[],
): Promise<ServiceRef[]> {
  if (!request.full || !request.configsUpdated) return refs;
  const configs = request.configsUpdated.map(parseConfigKey);
  const hosts = new Set<string>();
  const services = new Set<string>();
  if (configs.some((c) => c.kind === "Sidecar")) {
    for (const h of deps.routing?.virtualServiceHosts() ?? []) hosts.add(h);
    for (const bySvc of Object.values(deps.table?.overlays ?? {}))
      for (const svc of Object.keys(bySvc)) services.add(svc);
  }
  if (deps.hasSidecars && deps.routing)
    for (const c of configs) {
      if (c.kind !== "VirtualService") continue;
      const vs = deps.routing.virtualService(c.namespace, c.name);
      for (const h of vs ? destinationHosts([vs]) : []) hosts.add(h);
    }
  for (const ref of await servicesOf(deps, hosts)) services.add(ref);
  const have = new Set(refs.map((r) => `${r.namespace}/${r.hostname}`));
  const extra: ServiceRef[] = [];
  for (const svc of services) {
    if (have.has(svc)) continue;
    const slash = svc.indexOf("/");
    extra.push({ namespace: svc.slice(0, slash), hostname: svc.slice(slash + 1) });
  }
  if (extra.length === 0) return refs;
  return [...refs, ...extra].sort((a, b) =>
    a.namespace === b.namespace ? cmp(a.hostname, b.hostname) : cmp(a.namespace, b.namespace),
  );
}

/**
 * The services (`<ns>/<host>`) of `hosts`: a Kubernetes host names its namespace; other hosts and
 * wildcards are matched against the stored services, listed once and only then.
 */
async function servicesOf(deps: ViewScopeDeps, hosts: ReadonlySet<string>): Promise<string[]> {
  const out: string[] = [];
  const exact = new Set<string>();
  const wildcards: string[] = [];
  for (const h of hosts) {
    const ns = kubeServiceNamespace(h, deps.domainSuffix);
    if (ns !== undefined) out.push(`${ns}/${h}`);
    else if (isWildcard(h)) wildcards.push(h);
    else exact.add(h);
  }
  if (exact.size === 0 && wildcards.length === 0) return out;
  for (const e of await listAll<Service>(deps.store, keys.services())) {
    const { hostname, namespace } = e.value;
    if (exact.has(hostname) || wildcards.some((w) => hostMatches(w, hostname)))
      out.push(`${namespace}/${hostname}`);
  }
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
