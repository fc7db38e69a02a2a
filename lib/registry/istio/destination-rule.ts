/**
 * DestinationRules normalized for generation and chosen as istiod chooses them for a proxy
 * (push_context setDestinationRules / destinationRule, destination_rule.go mergeDestinationRule with
 * the enhanced merge that is on by default): rules of one namespace for the same host merge (first
 * created wins the top-level policy, subsets concatenate, a duplicate subset name keeps the first)
 * when their exportTo is equal or a superset; lookup is the proxy's namespace, then the service's
 * namespace, then the root namespace. Rules with a workloadSelector are accepted, not applied.
 */
import { byCreation, type ConfigMeta } from "./config-meta.ts";
import {
  type ConsistentHash,
  type EffectivePolicy,
  type LoadBalancer,
  mergeSubsetPolicy,
  type TrafficPolicy,
  toTrafficPolicy,
} from "./traffic-policy.ts";
import { isWildcard, mostSpecificHostMatch, resolveHost } from "./visibility.ts";

/** A named subset: the endpoints with its labels, and its own traffic policy. */
export interface Subset {
  name: string;
  /** Endpoints of the subset carry all these labels (sorted by key). */
  labels: Record<string, string>;
  trafficPolicy?: TrafficPolicy;
}

/** A validated DestinationRule, its host resolved. */
export interface DestinationRuleModel extends ConfigMeta {
  /** Resolved as istiod resolves it (short name ▶ `<name>.<namespace>.svc.<suffix>`). */
  host: string;
  /** spec.exportTo as written (empty = the mesh default, public). */
  exportTo: string[];
  /** spec.workloadSelector.matchLabels; such a rule is accepted but not applied (proxy-specific). */
  workloadSelector?: Record<string, string>;
  trafficPolicy?: TrafficPolicy;
  subsets: Subset[];
}

/** Istio's ConsolidatedDestRule: the merged rule one host gets, and the rules it came from. */
export interface ConsolidatedDestinationRule {
  rule: DestinationRuleModel;
  from: Array<{ namespace: string; name: string }>;
  exportTo: ReadonlySet<string>;
}

/** Normalizes a DestinationRule spec that passed destinationRuleCheck. */
export function toDestinationRule(
  meta: ConfigMeta,
  spec: unknown,
  domainSuffix: string,
): DestinationRuleModel {
  const s = (spec ?? {}) as Record<string, unknown>;
  const subsets: Subset[] = [];
  for (const raw of (s.subsets as Array<Record<string, unknown>> | undefined) ?? []) {
    const labels = Object.fromEntries(
      Object.entries((raw.labels as Record<string, string> | undefined) ?? {}).sort(([a], [b]) =>
        a < b ? -1 : 1,
      ),
    );
    const tp = toTrafficPolicy(raw.trafficPolicy);
    subsets.push({ name: raw.name as string, labels, ...(tp && { trafficPolicy: tp }) });
  }
  const tp = toTrafficPolicy(s.trafficPolicy);
  const ws = (s.workloadSelector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(meta.creationTimestamp !== undefined && { creationTimestamp: meta.creationTimestamp }),
    host: resolveHost(s.host as string, meta.namespace, domainSuffix),
    exportTo: [...((s.exportTo as string[] | undefined) ?? [])],
    ...(s.workloadSelector != null && { workloadSelector: { ...(ws ?? {}) } }),
    ...(tp && { trafficPolicy: tp }),
    subsets,
  };
}

/** The subset of that name, or undefined (a route to it is valid, and fails as a missing cluster). */
export function findSubset(dr: DestinationRuleModel | undefined, name: string): Subset | undefined {
  return dr?.subsets.find((s) => s.name === name);
}

/**
 * The policy the cluster `outbound|port|subset|host` gets: the rule's policy for the port, then
 * the subset's over it (MergeSubsetTrafficPolicy). No subset (or an unknown one) = the default cluster's.
 */
export function effectivePolicy(
  dr: DestinationRuleModel | undefined,
  port: number,
  subset?: string,
): EffectivePolicy | undefined {
  const s = subset ? findSubset(dr, subset) : undefined;
  return mergeSubsetPolicy(dr?.trafficPolicy, s?.trafficPolicy, port);
}

/**
 * hashForHTTPDestination: the consistent hash a route destination uses for its hash policy, the
 * first set of: the subset's port-level, the subset's, the rule's port-level, the rule's. Port-level
 * hashes count only when the destination names its port, as in istiod.
 */
export function routeConsistentHash(
  dr: DestinationRuleModel | undefined,
  destinationPort: number | undefined,
  subset?: string,
): ConsistentHash | undefined {
  const hash = (lb: LoadBalancer | undefined) =>
    lb && "consistentHash" in lb ? lb.consistentHash : undefined;
  const portLevel = (tp: TrafficPolicy | undefined) =>
    destinationPort === undefined
      ? undefined
      : tp?.portLevelSettings.find((p) => p.port === destinationPort)?.loadBalancer;
  const s = subset ? findSubset(dr, subset) : undefined;
  return (
    hash(portLevel(s?.trafficPolicy)) ??
    hash(s?.trafficPolicy?.loadBalancer) ??
    hash(portLevel(dr?.trafficPolicy)) ??
    hash(dr?.trafficPolicy?.loadBalancer)
  );
}

interface ByHost {
  specific: Map<string, ConsolidatedDestinationRule[]>;
  wildcard: Map<string, ConsolidatedDestinationRule[]>;
}

/** Answers which (merged) DestinationRule a proxy namespace applies to a service. */
export interface DestinationRuleIndex {
  /** The rule for `hostname` (a service of `serviceNamespace`) as proxies in `proxyNamespace` see it. */
  forService(
    proxyNamespace: string,
    hostname: string,
    serviceNamespace: string,
  ): ConsolidatedDestinationRule | undefined;
}

/** Builds the index once per set of rules (istiod does it once per push). */
export function createDestinationRuleIndex(
  rules: readonly DestinationRuleModel[],
  options: { rootNamespace: string },
): DestinationRuleIndex {
  const local = new Map<string, ByHost>();
  const exported = new Map<string, ByHost>();
  const rootLocal = byHost();
  const sorted = rules.filter((r) => r.workloadSelector === undefined).sort(byCreation);
  for (const rule of sorted) {
    const ns = rule.namespace;
    const exportTo = new Set(rule.exportTo);
    if (exportTo.size === 0 || exportTo.has("*") || exportTo.has(".") || exportTo.has(ns))
      merge(getOrAdd(local, ns), rule, exportTo);
    const privateOnly = exportTo.size === 1 && (exportTo.has(".") || exportTo.has(ns));
    if (!privateOnly) merge(getOrAdd(exported, ns), rule, exportTo);
    else if (ns === options.rootNamespace) merge(rootLocal, rule, exportTo);
  }
  const exportedFrom = (owner: string, hostname: string, client: string) => {
    const idx = exported.get(owner);
    const m = idx && mostSpecificHostMatch(hostname, idx.specific, idx.wildcard);
    return (m?.value ?? []).filter(
      (d) => d.exportTo.size === 0 || d.exportTo.has("*") || d.exportTo.has(client),
    );
  };
  return {
    forService(proxyNamespace, hostname, serviceNamespace) {
      const own = proxyNamespace === options.rootNamespace ? rootLocal : local.get(proxyNamespace);
      const found =
        (own && mostSpecificHostMatch(hostname, own.specific, own.wildcard)?.value) ||
        nonEmpty(exportedFrom(serviceNamespace, hostname, proxyNamespace)) ||
        nonEmpty(exportedFrom(options.rootNamespace, hostname, proxyNamespace));
      // SidecarScope.DestinationRule: the last rule without a workload selector.
      return found ? found[found.length - 1] : undefined;
    },
  };
}

function nonEmpty<T>(a: T[]): T[] | undefined {
  return a.length > 0 ? a : undefined;
}

function byHost(): ByHost {
  return { specific: new Map(), wildcard: new Map() };
}

function getOrAdd(m: Map<string, ByHost>, ns: string): ByHost {
  const v = m.get(ns) ?? byHost();
  m.set(ns, v);
  return v;
}

/** mergeDestinationRule (enhanced merge, rules without selectors). */
function merge(idx: ByHost, rule: DestinationRuleModel, exportTo: ReadonlySet<string>): void {
  const map = isWildcard(rule.host) ? idx.wildcard : idx.specific;
  const list = map.get(rule.host);
  const entry = () => ({ rule, from: [{ namespace: rule.namespace, name: rule.name }], exportTo });
  if (!list) {
    map.set(rule.host, [entry()]);
    return;
  }
  let appendSeparately = true;
  for (const m of list) {
    const equal = m.exportTo.size === exportTo.size && [...exportTo].every((e) => m.exportTo.has(e));
    const superset = m.exportTo.size > 0 && [...m.exportTo].every((e) => exportTo.has(e));
    if (!equal && !superset) {
      appendSeparately = true;
      continue;
    }
    appendSeparately = false;
    const names = new Set(m.rule.subsets.map((s) => s.name));
    m.rule = {
      ...m.rule,
      subsets: [...m.rule.subsets, ...rule.subsets.filter((s) => !names.has(s.name))],
      ...(m.rule.trafficPolicy === undefined &&
        rule.trafficPolicy !== undefined && { trafficPolicy: rule.trafficPolicy }),
    };
    m.from = [...m.from, { namespace: rule.namespace, name: rule.name }];
  }
  if (appendSeparately) list.push(entry());
}
