/**
 * The VirtualServices and DestinationRules a flush applies, read once per flush (never per
 * service) and indexed by host. The shared resources get the public view: the configs exported
 * to every namespace (`exportTo` absent or `*`). A namespace that may resolve a host differently
 * (a config exported to it only, or a DestinationRule of its own for another namespace's host) is
 * a view candidate: `forView` answers for it, and lib/push/views.ts stores what differs as overlays.
 * A namespace scoped by a Sidecar gets only the VirtualServices its egress hosts import
 * (SelectVirtualServices): `forView` with that Sidecar picks among those.
 */

import type { Service } from "../model/index.ts";
import {
  createDestinationRuleIndex,
  type DestinationRuleModel,
  toDestinationRule,
} from "../registry/istio/destination-rule.ts";
import type { SidecarModel } from "../registry/istio/sidecar.ts";
import type { StoredConfig } from "../registry/istio/stored.ts";
import { toVirtualService, type VirtualServiceModel } from "../registry/istio/virtual-service.ts";
import {
  createVirtualServiceHostIndex,
  toVirtualServiceImport,
  type VirtualServiceImport,
  virtualServicesFor,
} from "../registry/istio/virtual-service-select.ts";
import { hostMatches, isWildcard } from "../registry/istio/visibility.ts";
import { defaultMesh, type EffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/** The mesh settings routing reads: the root namespace (its DestinationRules apply mesh-wide) and the default exportTo. */
export type RoutingMesh = Pick<
  EffectiveMesh,
  "rootNamespace" | "defaultVirtualServiceExportTo" | "defaultDestinationRuleExportTo"
>;

/** What a flush applies to one service's shared resources. */
export interface RoutingView {
  virtualService?: VirtualServiceModel;
  destinationRule?: DestinationRuleModel;
}

/** The routing configs of one flush. */
export interface RoutingConfigs {
  /** The public view: the VirtualService winning `hostname` and the merged DestinationRule of the service, if any. */
  forService(namespace: string, hostname: string): RoutingView;
  /**
   * The same for proxies of namespace `view` (every config visible to it, in istiod's precedence);
   * with `sidecar` (the one scoping `view`, fixed for a flush), only the VirtualServices it imports.
   */
  forView(view: string, namespace: string, hostname: string, sidecar?: SidecarModel): RoutingView;
  /** Every VirtualService as a Sidecar may import it (toVirtualServiceImport), in key order. */
  imports(): VirtualServiceImport[];
  /** The hosts of every mesh-bound VirtualService (exact and wildcard), unique. */
  virtualServiceHosts(): string[];
  /** The VirtualService `<namespace>/<name>` as this flush reads it, if any. */
  virtualService(namespace: string, name: string): VirtualServiceModel | undefined;
  /**
   * The namespaces whose proxies may resolve `hostname` differently from the public view, sorted:
   * those a non-public config naming the host is exported to, and those holding a DestinationRule
   * for it (their own rules come first for their proxies).
   */
  viewNamespacesFor(hostname: string): string[];
  /** The service ports of each other host `vs` routes to (hosts with no service known are absent). */
  destinationPorts(vs: VirtualServiceModel, hostname: string): Promise<Record<string, number[]>>;
  /**
   * The Kubernetes service hosts (`<name>.<ns>.svc.<suffix>`) whose VirtualService routes to one
   * of `hosts`: their routes name those hosts' ports, so they are regenerated when those change.
   */
  routingTo(hosts: ReadonlySet<string>): { namespace: string; hostname: string }[];
  /** One sentence per config left out of the shared view, for the flush's log. */
  notApplied: string[];
}

/**
 * Reads every stored VirtualService and DestinationRule once; undefined when there are none. A config
 * without exportTo takes the mesh's default for its kind (Istio's defaultVirtualServiceExportTo and
 * defaultDestinationRuleExportTo). `generated` are VirtualServices made from other kinds (the
 * Gateway API's mesh routes): read beside the stored ones, ordered with them by istiod's precedence.
 */
export async function loadRoutingConfigs(
  store: Store,
  domainSuffix: string,
  mesh: RoutingMesh = defaultMesh,
  generated: readonly StoredConfig[] = [],
): Promise<RoutingConfigs | undefined> {
  const { rootNamespace } = mesh;
  const vss: VirtualServiceModel[] = [];
  const drs: DestinationRuleModel[] = [];
  const notApplied: string[] = [];
  // Host (exact or wildcard) ─▶ namespaces that may see it differently (see viewNamespacesFor).
  const candidates = new Map<string, Set<string>>();
  const addCandidate = (host: string, ns: string) => {
    const set = candidates.get(host) ?? new Set<string>();
    candidates.set(host, set.add(ns));
  };
  for (const kind of ["VirtualService", "DestinationRule"] as const) {
    const seen = new Set<string>();
    // Keys sort by namespace, name, then cluster: the first cluster's copy of a config is used.
    const stored = (await listAll<StoredConfig>(store, keys.configPrefix(kind))).map((e) => e.value);
    for (const c of kind === "VirtualService" ? [...stored, ...generated] : stored) {
      const id = `${c.namespace}/${c.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const written = (c.spec as { exportTo?: string[] }).exportTo ?? [];
      const fallback =
        kind === "VirtualService" ? mesh.defaultVirtualServiceExportTo : mesh.defaultDestinationRuleExportTo;
      // The public default leaves the list empty, as written: what the models hold stays as it was.
      const exportTo = written.length === 0 && !fallback.includes("*") ? [...fallback] : written;
      const meta = {
        name: c.name,
        namespace: c.namespace,
        ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
      };
      const hosts: string[] = [];
      if (kind === "VirtualService") {
        const vs = withExportTo(toVirtualService(meta, c.spec, domainSuffix), exportTo);
        vss.push(vs);
        hosts.push(...vs.hosts);
      } else {
        const dr = withExportTo(toDestinationRule(meta, c.spec, domainSuffix), exportTo);
        drs.push(dr);
        hosts.push(dr.host);
        for (const h of hosts) addCandidate(h, c.namespace);
      }
      if (exportTo.length > 0 && !exportTo.includes("*"))
        for (const e of exportTo)
          if (e !== "~") for (const h of hosts) addCandidate(h, e === "." ? c.namespace : e);
    }
  }
  if (vss.length === 0 && drs.length === 0 && notApplied.length === 0) return undefined;
  // virtualServicesFor("") keeps the public ones: their order and winner are every namespace's.
  const vsIndex = createVirtualServiceHostIndex(virtualServicesFor(vss, ""));
  const isPublic = (e: readonly string[]) => e.length === 0 || e.includes("*");
  const drIndex = createDestinationRuleIndex(
    drs.filter((r) => isPublic(r.exportTo)),
    { rootNamespace },
  );
  const allDrIndex = createDestinationRuleIndex(drs, { rootNamespace });
  const viewIndexes = new Map<string, ReturnType<typeof createVirtualServiceHostIndex>>();
  const vsIndexFor = (view: string, sidecar: SidecarModel | undefined) => {
    let index = viewIndexes.get(view);
    if (!index) {
      index = createVirtualServiceHostIndex(virtualServicesFor(vss, view, sidecar));
      viewIndexes.set(view, index);
    }
    return index;
  };
  let imports: VirtualServiceImport[] | undefined;
  const ports = new Map<string, Promise<number[] | undefined>>();
  const suffix = `.svc.${domainSuffix}`;
  const portsOf = (host: string): Promise<number[] | undefined> => {
    let p = ports.get(host);
    if (!p) {
      p = servicePorts(store, host, suffix);
      ports.set(host, p);
    }
    return p;
  };
  return {
    notApplied,
    viewNamespacesFor(hostname) {
      const out = new Set<string>(candidates.get(hostname));
      for (const [h, namespaces] of candidates)
        if (h !== hostname && isWildcard(h) && hostMatches(hostname, h))
          for (const ns of namespaces) out.add(ns);
      return [...out].sort();
    },
    imports() {
      imports ??= vss.flatMap((vs) => toVirtualServiceImport(vs) ?? []);
      return imports;
    },
    virtualServiceHosts() {
      return [...new Set(vss.filter((vs) => vs.appliesToMesh).flatMap((vs) => vs.hosts))];
    },
    virtualService: (namespace, name) => vss.find((vs) => vs.namespace === namespace && vs.name === name),
    forView(view, namespace, hostname, sidecar) {
      const vs = vsIndexFor(view, sidecar).forHost(hostname);
      const dr = allDrIndex.forService(view, hostname, namespace)?.rule;
      return { ...(vs && { virtualService: vs }), ...(dr && { destinationRule: dr }) };
    },
    routingTo(hosts) {
      const out: { namespace: string; hostname: string }[] = [];
      for (const vs of vss) {
        const routes = vs.http.some(
          (r) => r.action.kind === "route" && r.action.destinations.some((d) => hosts.has(d.host)),
        );
        if (!routes) continue;
        for (const h of vs.hosts) {
          const ns = kubeNamespace(h, suffix);
          if (ns !== undefined) out.push({ namespace: ns, hostname: h });
        }
      }
      return out;
    },
    forService(namespace, hostname) {
      const vs = vsIndex.forHost(hostname);
      // A proxy of the service's own namespace sees what every namespace sees of a public rule
      // there (own namespace, then exported, then the root namespace's).
      const dr = drIndex.forService(namespace, hostname, namespace)?.rule;
      return { ...(vs && { virtualService: vs }), ...(dr && { destinationRule: dr }) };
    },
    async destinationPorts(vs, hostname) {
      const out: Record<string, number[]> = {};
      for (const r of vs.http) {
        if (r.action.kind !== "route") continue;
        for (const d of r.action.destinations) {
          if (d.host === hostname || Object.hasOwn(out, d.host)) continue;
          const found = await portsOf(d.host);
          if (found) out[d.host] = found;
        }
      }
      return out;
    },
  };
}

/**
 * The ports of a Kubernetes service host (`<name>.<ns>.svc.<suffix>`), all clusters, sorted; other
 * hosts are not looked up (the route then uses the listener's port, as for an unknown host).
 */
async function servicePorts(store: Store, host: string, svcSuffix: string): Promise<number[] | undefined> {
  const ns = kubeNamespace(host, svcSuffix);
  if (ns === undefined) return undefined;
  const records = await listAll<Service>(store, keys.servicePrefix(ns, host));
  if (records.length === 0) return undefined;
  return [...new Set(records.flatMap((e) => e.value.ports.map((p) => p.port)))].sort((a, b) => a - b);
}

/** The namespace of a Kubernetes service host `<name>.<ns><svcSuffix>`, else undefined. */
function kubeNamespace(host: string, svcSuffix: string): string | undefined {
  const labels = host.endsWith(svcSuffix) ? host.slice(0, -svcSuffix.length).split(".") : [];
  return labels.length === 2 ? labels[1] : undefined;
}

/** `config` with the exportTo it is read with (the mesh default when it wrote none). */
function withExportTo<C extends { exportTo: string[] }>(config: C, exportTo: string[]): C {
  return config.exportTo.length === 0 && exportTo.length > 0 ? { ...config, exportTo } : config;
}
