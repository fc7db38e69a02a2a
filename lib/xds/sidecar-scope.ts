/**
 * What Envoy sidecar resources are built from, as functions over one push context (lib/push/
 * push-context.ts), never per proxy: per namespace (and per workloadSelector Sidecar a proxy's
 * labels select: scopeOf), the services a proxy there sees, each with the VirtualService and
 * DestinationRule chosen for that namespace exactly as the flush chooses them for the namespace's
 * view (lib/push/views.ts overlayOf), and per proxy its service instances (serviceInstances over an
 * index by endpoint IP). One scope per context, built on first ask and shared by every class.
 */

import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import type { SecurityPolicies } from "../registry/istio/security.ts";
import { type SidecarModel, sidecarFor, sidecarForWorkload } from "../registry/istio/sidecar.ts";
import type { EffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import { destinationHosts } from "../resources/destination-hosts.ts";
import type { GatewayConfigs } from "../resources/gateway-configs.ts";
import { serviceInstances } from "../resources/generators/sidecar/proxy.ts";
import type { ServiceInstance, SidecarProxy } from "../resources/generators/sidecar/types.ts";
import type { RoutingConfigs } from "../resources/istio-configs.ts";
import type { PushContext } from "../resources/push-context.ts";
import type { PushServices } from "../resources/push-services.ts";
import type { ServiceView } from "../resources/types.ts";
import { resolveView, type ViewTable } from "../resources/view-table.ts";

/** One push context as sidecars see it; immutable as the context is. */
export interface SidecarScope {
  /** The Sidecar scoping proxies of `namespace` (sidecarFor over the view table's Sidecars), if any. */
  sidecarOf(namespace: string): SidecarModel | undefined;
  /**
   * The Sidecar scoping this Envoy sidecar (sidecarForWorkload: a workloadSelector one its LABELS
   * match, oldest first, else its namespace's); undefined: none (everything exported to it).
   */
  scopeOf(proxy: SidecarProxy): SidecarModel | undefined;
  /**
   * The services proxies of `namespace` scoped by `sidecar` see (Sidecar egress, exportTo), routing
   * chosen for them; memoized per namespace and workload-selector Sidecar. Without a `sidecar` that
   * has a workloadSelector: the namespace's view, as the flush records it.
   */
  visibleTo(namespace: string, sidecar?: SidecarModel): Promise<readonly ServiceView[]>;
  /** The proxy's service instances (any service with an endpoint at one of its IPs, visible or not). */
  instancesOf(proxy: SidecarProxy): ServiceInstance[];
  /**
   * Whether one of `services` has outbound clusters that follow its endpoints: a DNS one (they carry
   * them inline) or a passthrough one, by resolution or a DestinationRule's PASSTHROUGH load
   * balancer (auto mTLS infers its mode from its endpoints' tlsMode).
   */
  outboundFollowsEndpoints(services: ReadonlySet<string>): boolean;
  /** The context's PeerAuthentications and AuthorizationPolicies (sidecar classes and proxyless server listeners read them). */
  readonly security: SecurityPolicies;
  /** The context's effective mesh settings (root namespace, trust domain, outbound policy, auto mTLS). */
  readonly mesh: EffectiveMesh;
  /** The context's Istio Gateways and gateway-bound VirtualServices (gateway proxies read them). */
  gateways(): Promise<GatewayConfigs>;
}

const scopes = new WeakMap<PushContext, Promise<SidecarScope>>();

/** The sidecar scope of `ctx` (its services and ServiceEntry hosts read on first ask), one per context. */
export function sidecarScope(ctx: PushContext): Promise<SidecarScope> {
  let scope = scopes.get(ctx);
  if (!scope) {
    const made = Promise.all([ctx.services(), ctx.externalHosts()]).then(([services, hosts]) =>
      makeScope(ctx, services, hosts),
    );
    scope = made;
    scopes.set(ctx, made);
    made.catch(() => {
      if (scopes.get(ctx) === made) scopes.delete(ctx);
    });
  }
  return scope;
}

function makeScope(
  ctx: PushContext,
  services: PushServices,
  externalHosts: ExternalHosts | undefined,
): SidecarScope {
  const { table, routing } = ctx;
  const { rootNamespace } = ctx.mesh;
  const base = services.views;
  const byIp = new Map<string, string[]>();
  for (const [id, view] of base)
    for (const endpoints of Object.values(view.shards?.shards ?? {}))
      for (const e of endpoints) {
        const list = byIp.get(e.address);
        if (!list) byIp.set(e.address, [id]);
        else if (list.at(-1) !== id && !list.includes(id)) list.push(id);
      }
  const visible = new Map<string, Promise<readonly ServiceView[]>>();
  const sidecarOf = (namespace: string) => sidecarFor(table.sidecars, namespace, rootNamespace);

  const routed = async (namespace: string, view: ServiceView, sidecar: SidecarModel | undefined) => {
    const chosen = routing?.forView(namespace, view.namespace, view.hostname, sidecar) ?? {};
    const vs = chosen.virtualService;
    const ports = (vs && (await routing?.destinationPorts(vs, view.hostname))) || {};
    const hosts =
      vs &&
      routing &&
      destinationHosts(routing, vs, view.hostname, ports, ctx.options.domainSuffix, externalHosts);
    return {
      ...view,
      ...chosen,
      ...(Object.keys(ports).length > 0 && { destinationPorts: ports }),
      ...(hosts && Object.keys(hosts).length > 0 && { destinationHosts: hosts }),
    };
  };

  const build = async (namespace: string, selected?: SidecarModel): Promise<readonly ServiceView[]> => {
    // A workloadSelector Sidecar scopes as its namespace's would: the same predicate, from a table
    // where it is the namespace's (with every VirtualService it may import).
    const scoped: ViewTable = selected
      ? {
          ...table,
          sidecars: [{ ...selected, namespace, workloadSelector: undefined }],
          virtualServices: routing?.imports() ?? [],
        }
      : table;
    const sees = resolveView(scoped, namespace, rootNamespace).visible;
    const sidecar = selected ?? sidecarOf(namespace);
    const out: ServiceView[] = [];
    for (const [id, view] of base) {
      if (sees !== null && !sees(id)) continue;
      out.push(routing ? await routed(namespace, view, sidecar) : view);
    }
    return out;
  };

  return {
    security: ctx.security,
    mesh: ctx.mesh,
    gateways: () => ctx.gateways(),
    sidecarOf,
    scopeOf: (proxy) =>
      sidecarForWorkload(ctx.sidecars, proxy.namespace, proxy.metadata.labels, rootNamespace),
    visibleTo(namespace, sidecar) {
      const selected = sidecar?.workloadSelector !== undefined ? sidecar : undefined;
      const key = selected ? `${namespace}\n${selected.namespace}/${selected.name}` : namespace;
      let p = visible.get(key);
      if (!p) {
        p = build(namespace, selected);
        visible.set(key, p);
        p.catch(() => visible.delete(key));
      }
      return p;
    },
    instancesOf(proxy) {
      const ids = new Set<string>();
      for (const ip of proxy.ipAddresses) for (const id of byIp.get(ip) ?? []) ids.add(id);
      const views: ServiceView[] = [];
      for (const id of [...ids].sort()) {
        const v = base.get(id);
        if (v) views.push(v);
      }
      return serviceInstances(proxy, views);
    },
    outboundFollowsEndpoints(ids) {
      const follows = (r: string) => r === "DNSLB" || r === "DNSRoundRobinLB" || r === "Passthrough";
      for (const id of ids) {
        const view = base.get(id);
        if (view?.services.some((s) => follows(s.resolution))) return true;
        if (view && routing && passthroughRule(routing, view.namespace, view.hostname)) return true;
      }
      return false;
    },
  };
}

/**
 * Whether a DestinationRule that some namespace applies to the host has a PASSTHROUGH load balancer
 * (its clusters are ORIGINAL_DST, their auto mTLS decided by the endpoints).
 */
function passthroughRule(routing: RoutingConfigs, namespace: string, hostname: string): boolean {
  const views = [undefined, ...routing.viewNamespacesFor(hostname)];
  return views.some((v) => {
    const at =
      v === undefined ? routing.forService(namespace, hostname) : routing.forView(v, namespace, hostname);
    const dr = at.destinationRule;
    const policies = [dr?.trafficPolicy, ...(dr?.subsets ?? []).map((s) => s.trafficPolicy)];
    return policies.some((tp) => {
      const lb = tp?.loadBalancer;
      return lb !== undefined && "simple" in lb && lb.simple === "PASSTHROUGH";
    });
  });
}
