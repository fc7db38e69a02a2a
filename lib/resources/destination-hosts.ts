/**
 * The other hosts a VirtualService routes to, as the generators judge those routes: shared by the
 * flush's per-namespace views and the Envoy sidecar scope, which must choose alike.
 */
import { kubeServiceNamespace } from "../model/index.ts";
import {
  type DestinationHost,
  type ExternalHosts,
  externalDestination,
} from "../registry/istio/route-destinations.ts";
import type { VirtualServiceModel } from "../registry/istio/virtual-service.ts";
import type { RoutingConfigs } from "./istio-configs.ts";

/**
 * What each other host `vs` routes to publishes, for the generator to judge those routes: a
 * Kubernetes host (`<name>.<ns>.svc.<suffix>`) with no service publishes nothing; one with a
 * service, its ports (`ports`, as the flush found them) and the subsets of the DestinationRule
 * its own namespace sees. Another host is judged against the ServiceEntry registry (`external`,
 * externalDestination: declared ports, the subsets of the rules the declaring namespaces see, no
 * service when no entry declares it); without `external`, on its ports only, when they are known.
 */
export function destinationHosts(
  routing: Pick<RoutingConfigs, "forService">,
  vs: VirtualServiceModel,
  hostname: string,
  ports: Readonly<Record<string, readonly number[]>>,
  domainSuffix: string,
  external?: ExternalHosts,
): Record<string, DestinationHost> {
  const out: Record<string, DestinationHost> = {};
  const subsetsIn = (ns: string, host: string) =>
    routing.forService(ns, host).destinationRule?.subsets.map((s) => s.name) ?? [];
  for (const r of vs.http) {
    if (r.action.kind !== "route") continue;
    for (const { host } of r.action.destinations) {
      if (host === hostname || Object.hasOwn(out, host)) continue;
      const ns = kubeServiceNamespace(host, domainSuffix);
      const found = Object.hasOwn(ports, host) ? ports[host] : undefined;
      if (ns !== undefined && (found || !external?.declared(host))) {
        out[host] = { ports: found ?? [], subsets: found ? subsetsIn(ns, host) : [] };
        continue;
      }
      const judged = external && externalDestination(host, external, (n) => subsetsIn(n, host));
      if (judged) out[host] = found ? { ...judged, ports: found } : judged;
      else if (found) out[host] = { ports: found };
    }
  }
  return out;
}
