/**
 * The push scope of a VirtualService, DestinationRule or Sidecar change, as istiod scopes a Full push
 * whose ConfigsUpdated names the config: the union of what the old and the new version touch, so a
 * host a config stops naming is regenerated too. Pure; callers expand wildcards against services.
 */
import type { DestinationRuleModel } from "./destination-rule.ts";
import type { SidecarModel } from "./sidecar.ts";
import type { VirtualServiceModel } from "./virtual-service.ts";
import { hostMatches, isWildcard } from "./visibility.ts";

/** What a config change regenerates: services by host, and proxy views by namespace. */
export interface PushScope {
  /** Exact service hostnames whose generated resources (routes, clusters) change. Sorted, unique. */
  hosts: string[];
  /** Wildcard hosts (`*.example.com`): every service host they match is in scope. Sorted, unique. */
  wildcards: string[];
  /**
   * Hosts the routes name as destinations (VirtualService only): in scope only where clusters are
   * generated from the routes that reference them. Sorted, unique.
   */
  destinations: string[];
  /** Proxy namespaces whose view changes (Sidecar); `*` when the root namespace's Sidecar changed. */
  namespaces: string[];
}

const sortedUnique = (xs: Iterable<string>) => [...new Set(xs)].sort();

function scope(
  hosts: Iterable<string>,
  destinations: Iterable<string> = [],
  namespaces: Iterable<string> = [],
): PushScope {
  const all = sortedUnique(hosts);
  return {
    hosts: all.filter((h) => !isWildcard(h)),
    wildcards: all.filter(isWildcard),
    destinations: sortedUnique(destinations),
    namespaces: sortedUnique(namespaces),
  };
}

/** A VirtualService change: its hosts, old ∪ new (a delegate, with no hosts, touches none on its own). */
export function virtualServiceScope(old?: VirtualServiceModel, next?: VirtualServiceModel): PushScope {
  const vss = [old, next].filter((v): v is VirtualServiceModel => v !== undefined);
  const destinations = vss.flatMap((vs) =>
    vs.http.flatMap((r) => (r.action.kind === "route" ? r.action.destinations.map((d) => d.host) : [])),
  );
  return scope(
    vss.flatMap((vs) => vs.hosts),
    destinations,
  );
}

/** A DestinationRule change: its host, old ∪ new. */
export function destinationRuleScope(old?: DestinationRuleModel, next?: DestinationRuleModel): PushScope {
  return scope([old?.host, next?.host].filter((h): h is string => h !== undefined));
}

/**
 * A Sidecar change: the view of its namespace's proxies; a root-namespace Sidecar scopes every
 * namespace without its own (`*`). Shared resources do not change.
 */
export function sidecarScope(
  old: SidecarModel | undefined,
  next: SidecarModel | undefined,
  rootNamespace: string,
): PushScope {
  const namespaces = [old, next]
    .filter((s): s is SidecarModel => s !== undefined)
    .map((s) => (s.namespace === rootNamespace ? "*" : s.namespace));
  return scope([], [], namespaces);
}

/** Whether `hostname` is in the scope's hosts or matched by one of its wildcards. */
export function scopeCovers(s: PushScope, hostname: string): boolean {
  return s.hosts.includes(hostname) || s.wildcards.some((w) => hostMatches(w, hostname));
}
