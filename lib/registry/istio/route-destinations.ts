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
