/** Which services a push touches: the ConfigsUpdated of a merged PushRequest, resolved against the store. */
import { kindTable } from "../kinds/descriptors.ts";
import { type PushRequest, parseConfigKey, type Service } from "../model/index.ts";
import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import type { RoutingConfigs } from "../resources/istio-configs.ts";
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";

/** One service, by namespace and hostname. */
export interface ServiceRef {
  namespace: string;
  hostname: string;
  /**
   * The service's records (one per cluster, in key order), when the scope was found by listing
   * every service: planning uses them instead of reading them once more. Absent: read them.
   */
  services?: Service[];
}

/**
 * Kinds whose keys a push names beside the ServiceEntry keys of the services they touch (ingest
 * adds those, old ∪ new): the services named are the whole scope. A Sidecar (push scope "views")
 * regenerates no service: it changes the view table only (lib/push/views.ts); nor does a security
 * policy (push scope "policy"): it changes what the proxies it selects derive (push-refresh.ts);
 * nor does a gateway's config (push scope "gateways"): gateway proxies' snapshots re-derive it; nor
 * a Secret (push scope "secrets"): only the gateway streams holding its names read it again.
 */
const scopedByServices: ReadonlySet<string> = new Set(
  kindTable
    .filter(
      (d) =>
        d.push === "services" ||
        d.push === "views" ||
        d.push === "policy" ||
        d.push === "gateways" ||
        d.push === "secrets",
    )
    .map((d) => d.kind),
);

/** The kinds of push scope "policy" (PeerAuthentication, AuthorizationPolicy). */
const policyKinds: ReadonlySet<string> = new Set(
  kindTable.filter((d) => d.push === "policy").map((d) => d.kind),
);

/**
 * The ConfigKey kinds of the mesh records (lib/ingest/mesh-records.ts): mesh-wide settings, so a
 * push naming one regenerates every service (servicesInScope finds them unscoped) and re-reads
 * the security policies, as an unknown scope does.
 */
const meshKinds: ReadonlySet<string> = new Set(["MeshConfig", "MeshNetworks"]);

/**
 * Whether a Full push may change the security policies: it names one (or everything). Istio's
 * PushContext.updateContext re-reads authn and authz policies only then, and so does the flush.
 */
export function namesPolicy(request: PushRequest): boolean {
  if (!request.full) return false;
  return request.configsUpdated === null || namesPolicyKey(request.configsUpdated);
}

/** Whether one of `configs` (ConfigKey strings) is a security policy's, or a mesh-wide setting's. */
export function namesPolicyKey(configs: readonly string[]): boolean {
  return configs.some((c) => {
    const kind = parseConfigKey(c).kind;
    return policyKinds.has(kind) || meshKinds.has(kind);
  });
}

/**
 * The services to regenerate, sorted. ServiceEntry keys name services; VirtualService and
 * DestinationRule keys come with the ServiceEntry keys of the hosts they touch, so they add none
 * themselves; Sidecar and security policy keys name none. Unknown scope (null configs, or another
 * kind) means every service the store knows, plus every service that generated resources before,
 * so that vanished services have their resources removed. A PeerAuthentication in `rootNamespace`
 * (the mesh's) is mesh-wide: unknown scope too.
 */
export async function servicesInScope(
  store: Store,
  request: PushRequest,
  rootNamespace: string,
): Promise<ServiceRef[]> {
  const configs = request.configsUpdated?.map(parseConfigKey);
  const found = new Map<string, ServiceRef>();
  const scoped = configs?.every(
    (c) =>
      scopedByServices.has(c.kind) && !(c.kind === "PeerAuthentication" && c.namespace === rootNamespace),
  )
    ? configs
    : undefined;
  // A PeerAuthentication decides whether proxyless clusters toward its namespace's workloads take
  // auto-mTLS (generators/cluster-tls.ts): that namespace's services are generated again; a mesh-wide
  // one (the root namespace) leaves the scope unknown, so every service is.
  const prefixes = scoped
    ? [
        ...new Set(
          scoped.filter((c) => c.kind === "PeerAuthentication").map((c) => keys.servicesIn(c.namespace)),
        ),
      ]
    : [keys.services(), "gen/"];
  if (scoped)
    for (const c of scoped)
      if (c.kind === "ServiceEntry")
        found.set(`${c.namespace}/${c.name}`, { namespace: c.namespace, hostname: c.name });
  for (const prefix of prefixes) {
    for (const e of await listAll(store, prefix)) {
      const [, namespace, hostname] = e.key.split("/");
      if (!namespace || !hostname) continue;
      let ref = found.get(`${namespace}/${hostname}`);
      if (!ref) {
        ref = { namespace: decodeSegment(namespace), hostname: decodeSegment(hostname), services: [] };
        found.set(`${namespace}/${hostname}`, ref);
      }
      if (prefix !== "gen/") ref.services?.push(e.value as Service);
    }
  }
  return [...found.values()].sort((a, b) =>
    a.namespace === b.namespace ? cmp(a.hostname, b.hostname) : cmp(a.namespace, b.namespace),
  );
}

/**
 * The ServiceEntry hosts whose VirtualService routes to one of `hosts` (RoutingConfigs.routingTo
 * finds the Kubernetes ones): their routes name those hosts' ports, clusters and subsets, so a
 * full push of a destination (created, deleted, re-ported, its rule's subsets changed) regenerates
 * them too, and a route to a host that went away becomes the UNAVAILABLE abort at once.
 */
export function externalRoutingTo(
  routing: Pick<RoutingConfigs, "forService">,
  external: ExternalHosts,
  hosts: ReadonlySet<string>,
): ServiceRef[] {
  const out: ServiceRef[] = [];
  if (hosts.size === 0) return out;
  for (const [hostname, declared] of external.entries()) {
    for (const namespace of declared.namespaces) {
      const vs = routing.forService(namespace, hostname).virtualService;
      const routes = vs?.http.some(
        (r) => r.action.kind === "route" && r.action.destinations.some((d) => hosts.has(d.host)),
      );
      if (routes) out.push({ namespace, hostname });
    }
  }
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A full push of some services also regenerates the hosts whose VirtualService routes to them:
 * those routes name the destinations' ports and clusters (a destination created, removed or
 * re-ported after the VirtualService). Unknown scope already has every service.
 */
export function withRoutesTo(
  refs: ServiceRef[],
  request: PushRequest,
  routing: RoutingConfigs | undefined,
  external: ExternalHosts | undefined,
): ServiceRef[] {
  if (!routing || !request.full || request.configsUpdated === null) return refs;
  const have = new Set(refs.map((r) => `${r.namespace}/${r.hostname}`));
  const hosts = new Set(refs.map((r) => r.hostname));
  const extra = [
    ...routing.routingTo(hosts),
    ...(external ? externalRoutingTo(routing, external, hosts) : []),
  ].filter((r) => !have.has(`${r.namespace}/${r.hostname}`) && have.add(`${r.namespace}/${r.hostname}`));
  if (extra.length === 0) return refs;
  return [...refs, ...extra].sort((a, b) =>
    a.namespace === b.namespace ? cmp(a.hostname, b.hostname) : cmp(a.namespace, b.namespace),
  );
}
