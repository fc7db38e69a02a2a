/**
 * Sidecar egress scoping, pure, as istiod's SidecarScope applies it (sidecar.go): `ns/host` egress
 * hosts (`*` any namespace, `.` the proxy's own, `~` none; host exact or wildcard), a proxy's
 * Sidecar (its namespace's without workloadSelector, oldest first, else the root namespace's),
 * and `visibleTo`, which decides whether a service, VirtualService or DestinationRule is in a
 * proxy's view (the services imported VirtualServices route to: virtual-service-select.ts).
 */
import { byCreation, type ConfigMeta } from "./config-meta.ts";
import { exportedTo, hostMatches, hostSubsetOf, isWildcard } from "./visibility.ts";

/** One egress host: `namespace` as written (`*`, `.`, `~` or a name), `host` exact or wildcard. */
export interface EgressHost {
  namespace: string;
  host: string;
}

/**
 * One ingress listener (IstioIngressListener), as validated: `port` its number (the inbound
 * cluster `inbound|<port>||` and chain are keyed by it), `protocol` and `name` as written ("" when
 * absent), `bind` an IP ("" when absent), `captureMode` DEFAULT/IPTABLES/NONE, `defaultEndpoint`
 * `127.0.0.1:<port>`, `0.0.0.0:<port>`, `[::1]:<port>`, `[::]:<port>`, `:<port>` or `unix://<path>` ("" when absent).
 */
export interface SidecarIngress {
  port: number;
  protocol: string;
  name: string;
  bind: string;
  captureMode: "DEFAULT" | "IPTABLES" | "NONE";
  defaultEndpoint: string;
}

/** A validated Sidecar as egress scoping and Envoy sidecars' inbound side need it. */
export interface SidecarModel extends ConfigMeta {
  /** workloadSelector.labels: applied to Envoy sidecars whose labels match (sidecarForWorkload), not to proxyless views. */
  workloadSelector?: Record<string, string>;
  /** The hosts of every egress listener (their union: gRPC clients have no listener ports); none ▶ `*\/*`. */
  egressHosts: EgressHost[];
  /** The ingress listeners, in order (Envoy sidecars only); absent when none. */
  ingress?: SidecarIngress[];
  /**
   * outboundTrafficPolicy.mode (Envoy sidecars only): replaces the mesh's for the proxies it scopes,
   * as istiod's SidecarScope; set without a mode it is REGISTRY_ONLY (the enum's zero). Absent: the mesh's.
   */
  outboundTrafficPolicy?: "ALLOW_ANY" | "REGISTRY_ONLY";
}

/** Normalizes a Sidecar spec that passed sidecarCheck. */
export function toSidecar(meta: ConfigMeta, spec: unknown): SidecarModel {
  const s = (spec ?? {}) as {
    workloadSelector?: { labels?: Record<string, string> };
    egress?: Array<{ hosts?: string[] }>;
    outboundTrafficPolicy?: { mode?: string } | null;
    ingress?: Array<{
      port?: { number?: number; protocol?: string; name?: string };
      bind?: string;
      captureMode?: string;
      defaultEndpoint?: string;
    }>;
  };
  const ingress: SidecarIngress[] = (s.ingress ?? []).map((l) => ({
    port: l.port?.number ?? 0,
    protocol: l.port?.protocol ?? "",
    name: l.port?.name ?? "",
    bind: l.bind ?? "",
    captureMode: l.captureMode === "NONE" || l.captureMode === "IPTABLES" ? l.captureMode : "DEFAULT",
    defaultEndpoint: l.defaultEndpoint ?? "",
  }));
  const egressHosts: EgressHost[] = [];
  for (const l of s.egress ?? [])
    for (const h of l.hosts ?? []) {
      const slash = h.indexOf("/");
      egressHosts.push({ namespace: h.slice(0, slash), host: h.slice(slash + 1) });
    }
  if (egressHosts.length === 0) egressHosts.push({ namespace: "*", host: "*" });
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(meta.creationTimestamp !== undefined && { creationTimestamp: meta.creationTimestamp }),
    ...(s.workloadSelector != null && { workloadSelector: { ...(s.workloadSelector.labels ?? {}) } }),
    egressHosts,
    ...(ingress.length > 0 && { ingress }),
    ...(s.outboundTrafficPolicy != null && {
      outboundTrafficPolicy: s.outboundTrafficPolicy.mode === "ALLOW_ANY" ? "ALLOW_ANY" : "REGISTRY_ONLY",
    }),
  };
}

/**
 * The Sidecar that scopes proxies of `proxyNamespace` (getSidecarScope): the oldest one in that
 * namespace without a workloadSelector, else the oldest in the root namespace, else none (the default:
 * everything exported to the namespace).
 */
export function sidecarFor(
  sidecars: readonly SidecarModel[],
  proxyNamespace: string,
  rootNamespace: string,
): SidecarModel | undefined {
  const candidates = sidecars.filter((s) => s.workloadSelector === undefined).sort(byCreation);
  return (
    candidates.find((s) => s.namespace === proxyNamespace) ??
    candidates.find((s) => s.namespace === rootNamespace)
  );
}

/**
 * The Sidecar that scopes one Envoy sidecar (getSidecarScope with its workload labels): in its
 * namespace, the oldest Sidecar whose workloadSelector labels are all among the proxy's labels
 * (Istio sorts those with a selector first, by creation), else sidecarFor's. Proxyless views never
 * ask this (they have no labels of one workload): their Sidecars stay sidecarFor's.
 */
export function sidecarForWorkload(
  sidecars: readonly SidecarModel[],
  proxyNamespace: string,
  labels: Readonly<Record<string, string>>,
  rootNamespace: string,
): SidecarModel | undefined {
  const selected = sidecars
    .filter((s) => s.namespace === proxyNamespace && s.workloadSelector !== undefined)
    .sort(byCreation)
    .find((s) => Object.entries(s.workloadSelector ?? {}).every(([k, v]) => labels[k] === v));
  return selected ?? sidecarFor(sidecars, proxyNamespace, rootNamespace);
}

/** The egress hosts for a namespace key (`.` is the proxy's namespace), and those for `*`. */
function hostsFor(sidecar: SidecarModel, proxyNamespace: string, namespace: string): string[] {
  return sidecar.egressHosts
    .filter((e) => (e.namespace === "." ? proxyNamespace : e.namespace) === namespace)
    .map((e) => e.host);
}

/** hostClassification.Matches: a service host is imported when an egress host equals or covers it. */
function importsHost(hosts: readonly string[], hostname: string): boolean {
  return hosts.some(
    (h) => h === hostname || ((isWildcard(h) || isWildcard(hostname)) && hostSubsetOf(hostname, h)),
  );
}

/** hostClassification.VSMatches (non-gateway semantics): exact, or either side a wildcard that overlaps. */
function importsVsHost(hosts: readonly string[], vsHost: string): boolean {
  return hosts.some((h) => h === vsHost || ((isWildcard(h) || isWildcard(vsHost)) && hostMatches(vsHost, h)));
}

/** selectServices: the service (of `serviceNamespace`) is imported by `ns/host` or `*\/host`. */
export function importsService(
  sidecar: SidecarModel,
  proxyNamespace: string,
  serviceNamespace: string,
  hostname: string,
): boolean {
  return (
    importsHost(hostsFor(sidecar, proxyNamespace, serviceNamespace), hostname) ||
    importsHost(hostsFor(sidecar, proxyNamespace, "*"), hostname)
  );
}

/** SelectVirtualServices: any of the VirtualService's hosts is imported from its namespace or `*`. */
export function importsVirtualService(
  sidecar: SidecarModel,
  proxyNamespace: string,
  vsNamespace: string,
  vsHosts: readonly string[],
): boolean {
  const own = hostsFor(sidecar, proxyNamespace, vsNamespace);
  const any = hostsFor(sidecar, proxyNamespace, "*");
  return vsHosts.some((h) => importsVsHost(own, h) || importsVsHost(any, h));
}

/** A service, VirtualService or DestinationRule as `visibleTo` sees it. */
export interface VisibleConfig {
  kind: "Service" | "VirtualService" | "DestinationRule";
  namespace: string;
  /** exportTo (or the service's networking.istio.io/exportTo); empty = public. */
  exportTo?: readonly string[];
  /** The service's hostname, the VirtualService's hosts, the DestinationRule's host (all resolved). */
  hosts: readonly string[];
}

/**
 * Whether proxies of `proxyNamespace` (scoped by `sidecar`, see sidecarFor) see the config: it must be
 * exported to the namespace, and a service or VirtualService must be imported by the Sidecar's egress
 * hosts. A DestinationRule follows exportTo only: which one applies is createDestinationRuleIndex's
 * answer. (istiod also imports services that an imported VirtualService routes to; the caller adds those.)
 */
export function visibleTo(
  proxyNamespace: string,
  sidecar: SidecarModel | undefined,
  config: VisibleConfig,
): boolean {
  if (!exportedTo(config.exportTo, config.namespace, proxyNamespace)) return false;
  if (!sidecar || config.kind === "DestinationRule") return true;
  if (config.kind === "VirtualService")
    return importsVirtualService(sidecar, proxyNamespace, config.namespace, config.hosts);
  return config.hosts.some((h) => importsService(sidecar, proxyNamespace, config.namespace, h));
}
