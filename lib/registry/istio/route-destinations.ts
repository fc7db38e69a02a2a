/**
 * Whether a VirtualService route destination names a cluster that exists: Istio accepts a route to
 * a host or subset nobody defines (Envoy then answers 503 NC). Pure: what a host publishes is
 * passed in, so the flush (published view) and ingest (stored services) decide alike.
 */
import type { RouteDestination } from "./virtual-service.ts";

/** What a destination host publishes, as far as the caller knows. */
export interface DestinationHost {
  /** The service's ports; empty when no service has that host. */
  ports: readonly number[];
  /** The subsets of the DestinationRule that applies to it; undefined when not known (not judged). */
  subsets?: readonly string[];
}

/**
 * GetDestinationCluster's port: the destination's own, else the service's only port, else the
 * listener's (the port the client dialled).
 */
export function destinationPort(
  d: RouteDestination,
  listenerPort: number,
  servicePorts?: readonly number[],
): number {
  return d.port ?? (servicePorts?.length === 1 ? (servicePorts[0] as number) : listenerPort);
}

/**
 * Why `d`, routed from `listenerPort`, names a cluster `host` does not publish (a sentence naming
 * the host, port or subset), or undefined when it does or `host` is not known (not judged).
 */
export function danglingReason(
  d: RouteDestination,
  listenerPort: number,
  host: DestinationHost | undefined,
): string | undefined {
  if (!host) return undefined;
  if (host.ports.length === 0) return `no service has host ${d.host}`;
  const port = destinationPort(d, listenerPort, host.ports);
  if (!host.ports.includes(port)) return `service ${d.host} has no port ${port}`;
  if (d.subset !== undefined && host.subsets !== undefined && !host.subsets.includes(d.subset))
    return `no DestinationRule for ${d.host} defines subset ${d.subset}`;
  return undefined;
}

/** One host as the ServiceEntry registry declares it. */
export interface DeclaredHost {
  /** The namespaces of the entries declaring it (sorted, unique). */
  namespaces: readonly string[];
  /** Every port those entries declare for it (sorted, unique). */
  ports: readonly number[];
}

/**
 * The ServiceEntry registry's hosts, so a destination outside the Kubernetes registry is judged
 * like a Kubernetes one: a host no entry declares has no service; one a wildcard entry host
 * (`*.example.com`) matches is not judged (the wildcard's own clusters are not the host's).
 */
export interface ExternalHosts {
  /** What entries declare `host` exactly; undefined when none does. */
  declared(host: string): DeclaredHost | undefined;
  /** Whether a wildcard entry host matches `host`. */
  wildcard(host: string): boolean;
  /** Every host declared (wildcards included, as written) and by whom, in no particular order. */
  entries(): IterableIterator<[host: string, declared: DeclaredHost]>;
}

/** Indexes the External service records (convertServiceEntry's, one per entry and host). */
export function externalHosts(
  services: Iterable<{ hostname: string; namespace: string; ports: readonly { port: number }[] }>,
): ExternalHosts {
  const exact = new Map<string, { namespaces: Set<string>; ports: Set<number> }>();
  const wildcards = new Set<string>();
  for (const s of services) {
    if (s.hostname.startsWith("*")) wildcards.add(s.hostname.slice(1));
    let e = exact.get(s.hostname);
    if (!e) {
      e = { namespaces: new Set(), ports: new Set() };
      exact.set(s.hostname, e);
    }
    e.namespaces.add(s.namespace);
    for (const p of s.ports) e.ports.add(p.port);
  }
  const declared = new Map<string, DeclaredHost>();
  for (const [host, e] of exact)
    declared.set(host, {
      namespaces: [...e.namespaces].sort(),
      ports: [...e.ports].sort((a, b) => a - b),
    });
  return {
    declared: (host) => declared.get(host),
    wildcard: (host) => [...wildcards].some((suffix) => host.endsWith(suffix)),
    entries: () => declared.entries(),
  };
}

/**
 * What a destination host outside the Kubernetes form publishes, judged against the ServiceEntry
 * registry: undefined (not judged) when a wildcard entry matches it and no entry declares it
 * exactly; no ports when nothing declares it; else the declared ports and the subsets of the
 * rules each declaring namespace sees (`subsetsIn`, a union: a subset any of them defines exists).
 */
export function externalDestination(
  host: string,
  external: ExternalHosts,
  subsetsIn: (namespace: string) => readonly string[],
): DestinationHost | undefined {
  const found = external.declared(host);
  if (!found) return external.wildcard(host) ? undefined : { ports: [], subsets: [] };
  const subsets = new Set<string>();
  for (const ns of found.namespaces) for (const s of subsetsIn(ns)) subsets.add(s);
  return { ports: found.ports, subsets: [...subsets].sort() };
}
