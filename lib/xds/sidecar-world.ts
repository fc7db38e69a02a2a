/**
 * What Envoy sidecar resources are built from, read from the store once per mesh state (never per
 * proxy): every service with its endpoint shards (discovery selectors applied, one registry per
 * host as the flush serves it), the VirtualServices and DestinationRules (loadRoutingConfigs), the
 * ServiceEntry hosts, the view table (namespace-wide Sidecars, exportTo) and every stored Sidecar
 * (workloadSelector ones too). From it, per namespace (and per workloadSelector Sidecar a proxy's
 * labels select: scopeOf), the services a proxy there sees, each with the VirtualService and
 * DestinationRule chosen for that namespace exactly as the flush chooses them for the namespace's
 * view (lib/push/views.ts overlayOf), and per proxy its service instances (serviceInstances over an
 * index by endpoint IP).
 */

import type { Service } from "../model/index.ts";
import { destinationHosts } from "../push/consistency.ts";
import { loadExternalHosts } from "../push/external-hosts.ts";
import { loadRoutingConfigs, type RoutingConfigs, rootNamespace } from "../push/istio-configs.ts";
import { readSidecars } from "../push/views.ts";
import { createVisibility } from "../push/visibility.ts";
import { servingServices } from "../registry/istio/external-services.ts";
import { type SidecarModel, sidecarFor, sidecarForWorkload } from "../registry/istio/sidecar.ts";
import type { LabelSelector } from "../registry/kube/records.ts";
import { serviceInstances } from "../resources/generators/sidecar/proxy.ts";
import type { ServiceInstance, SidecarProxy } from "../resources/generators/sidecar/types.ts";
import type { ServiceView } from "../resources/types.ts";
import { createViewTableReader } from "../resources/view-store.ts";
import { resolveView, type ViewTable } from "../resources/view-table.ts";
import type { EndpointShardsStored } from "../shards/shard-pieces.ts";
import { assembleShards } from "../shards/shard-store.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/** How a host reads its world. */
export interface SidecarWorldOptions {
  store: Store;
  domainSuffix: string;
  /** meshConfig discoverySelectors: only matching namespaces are served (as the flush serves them). */
  discoverySelectors?: readonly LabelSelector[];
}

/** One mesh state as sidecars see it; immutable: a change makes a new world. */
export interface SidecarWorld {
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
  /** The same world with the endpoint shards of `services` (`<ns>/<host>`) read again. */
  withShards(services: ReadonlySet<string>): Promise<SidecarWorld>;
  /** Whether one of `services` resolves by DNS (its outbound clusters carry its endpoints inline). */
  resolvesByDns(services: ReadonlySet<string>): boolean;
}

/** Services read per getMany of their shards (as the flush plans them). */
const chunk = 256;

/** Reads one world from the store: the view table, routing configs, every service and its shards. */
export async function loadSidecarWorld(options: SidecarWorldOptions): Promise<SidecarWorld> {
  const { store, domainSuffix } = options;
  const table = await createViewTableReader(store).read();
  // Every Sidecar, workloadSelector ones too (the view table records namespace-wide ones only).
  const sidecars = await readSidecars(store);
  const routing = await loadRoutingConfigs(store, domainSuffix);
  const externalHosts = routing ? await loadExternalHosts(store) : undefined;
  const visibility = createVisibility(store, options.discoverySelectors ?? []);
  const records = new Map<string, Service[]>();
  for (const e of await listAll<Service>(store, keys.services())) {
    const id = `${e.value.namespace}/${e.value.hostname}`;
    const list = records.get(id);
    if (list) list.push(e.value);
    else records.set(id, [e.value]);
  }
  const base = await readViews(store, visibility.filterView, records);
  return makeWorld({
    store,
    table,
    sidecars,
    routing,
    externalHosts,
    domainSuffix,
    visibility,
    records,
    base,
  });
}

interface WorldState {
  store: Store;
  table: ViewTable;
  sidecars: readonly SidecarModel[];
  routing: RoutingConfigs | undefined;
  externalHosts: Awaited<ReturnType<typeof loadExternalHosts>> | undefined;
  domainSuffix: string;
  visibility: ReturnType<typeof createVisibility>;
  records: ReadonlyMap<string, Service[]>;
  /** `<ns>/<host>` ─▶ the service's records and shards, in key order; services no namespace serves are absent. */
  base: ReadonlyMap<string, ServiceView>;
}

/** Every service of `records` with its shards, filtered and resolved as the flush plans them. */
async function readViews(
  store: Store,
  filterView: (view: ServiceView) => Promise<ServiceView>,
  records: ReadonlyMap<string, Service[]>,
): Promise<Map<string, ServiceView>> {
  const out = new Map<string, ServiceView>();
  const ids = [...records.keys()].sort();
  for (let at = 0; at < ids.length; at += chunk) {
    const part = ids.slice(at, at + chunk);
    const refs = part.map((id) => records.get(id)?.[0] as Service);
    const wanted = refs.map((s) => keys.shards(s.namespace, s.hostname));
    const read = await store.getMany<EndpointShardsStored>(wanted);
    const shards = await assembleShards(
      store,
      wanted.map((k) => read.get(k)?.value),
    );
    for (let i = 0; i < part.length; i++) {
      const first = refs[i] as Service;
      const visible = await filterView({
        hostname: first.hostname,
        namespace: first.namespace,
        services: records.get(part[i] as string) ?? [],
        shards: shards[i],
      });
      if (visible.services.length === 0) continue;
      const served = servingServices(visible.services);
      out.set(
        part[i] as string,
        served === visible.services ? visible : { ...visible, services: [...served] },
      );
    }
  }
  return out;
}

function makeWorld(state: WorldState): SidecarWorld {
  const { table, routing } = state;
  const byIp = new Map<string, string[]>();
  for (const [id, view] of state.base)
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
      destinationHosts(routing, vs, view.hostname, ports, state.domainSuffix, state.externalHosts);
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
    for (const [id, view] of state.base) {
      if (sees !== null && !sees(id)) continue;
      out.push(routing ? await routed(namespace, view, sidecar) : view);
    }
    return out;
  };

  return {
    sidecarOf,
    scopeOf: (proxy) =>
      sidecarForWorkload(state.sidecars, proxy.namespace, proxy.metadata.labels, rootNamespace),
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
        const v = state.base.get(id);
        if (v) views.push(v);
      }
      return serviceInstances(proxy, views);
    },
    async withShards(services) {
      const records = new Map<string, Service[]>();
      for (const id of services) {
        const r = state.records.get(id);
        if (r) records.set(id, r);
      }
      const fresh = await readViews(state.store, state.visibility.filterView, records);
      const base = new Map(state.base);
      for (const id of records.keys()) {
        const v = fresh.get(id);
        if (v) base.set(id, v);
        else base.delete(id);
      }
      return makeWorld({ ...state, base });
    },
    resolvesByDns(services) {
      for (const id of services)
        for (const s of state.base.get(id)?.services ?? [])
          if (s.resolution === "DNSLB" || s.resolution === "DNSRoundRobinLB") return true;
      return false;
    },
  };
}
