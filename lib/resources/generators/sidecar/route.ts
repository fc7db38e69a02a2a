/**
 * RDS for an Envoy sidecar, as istiod's BuildHTTPRoutes builds it for a sidecar
 * (pilot/pkg/networking/core/httproute.go buildSidecarOutboundHTTPRouteConfig,
 * BuildSidecarOutboundVirtualHosts; route/route.go BuildSidecarVirtualHostWrapper): one
 * RouteConfiguration `<port>` per outbound HTTP port, and `<host>:<port>` per sniffed port.
 */
import {
  type Route,
  type VirtualHost,
  VirtualHostSchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../../gen/envoy/config/route/v3/route_pb.ts";
import { kubeServiceNamespace } from "../../../model/index.ts";
import type { Generated, ServiceView } from "../../types.ts";
import { clusterName, compareStrings, listenerName, message } from "../shared.ts";
import { outboundEntries } from "./listener-outbound.ts";
import { type OutboundPort, outboundPorts, recordFor, serviceVips } from "./outbound-ports.ts";
import { catchAllVirtualHost, defaultOutboundRoute } from "./route-default.ts";
import { dedupeDomains, serviceDomains } from "./route-domains.ts";
import { defaultRouteHashPolicies } from "./route-hash.ts";
import { sidecarVirtualServiceRoutes } from "./route-vs-sidecar.ts";
import type { SidecarInputs } from "./types.ts";

/** route.DefaultMaxDirectResponseBodySizeBytes: 1 MiB. */
const MAX_DIRECT_RESPONSE_BODY_BYTES = 1024 * 1024;

/**
 * The sidecar's RouteConfigurations, sorted by name: one per RDS name its outbound listeners take
 * (listener-outbound.ts), as istiod answers the names LDS made the proxy ask for. `<port>`: a
 * virtual host per visible service with an HTTP or sniffed port of that number, then the catch-all.
 * `<host>:<port>` (a sniffed port with a VIP): that service's virtual host alone, domains `*`, no
 * catch-all (getVirtualHostsForSniffedServicePort).
 */
export function sidecarRouteConfigurations(
  inputs: SidecarInputs,
): Generated<typeof RouteConfigurationSchema>[] {
  const byNumber = new Map<number, OutboundPort[]>();
  for (const p of outboundPorts(inputs.services)) {
    if (p.kind === "tcp") continue;
    const list = byNumber.get(p.port.port) ?? [];
    list.push(p);
    byNumber.set(p.port.port, list);
  }
  const names = new Set<string>();
  for (const e of outboundEntries(inputs)) if (e.rds !== undefined) names.add(e.rds);
  const out: Generated<typeof RouteConfigurationSchema>[] = [];
  for (const [port, list] of byNumber) {
    const name = String(port);
    if (names.has(name)) {
      const hosts = [
        ...outboundVirtualHosts(list, port, inputs),
        catchAllVirtualHost(inputs.mesh.outboundTrafficPolicy),
      ];
      out.push({ name, schema: RouteConfigurationSchema, message: routeConfiguration(name, hosts) });
    }
    for (const p of list) {
      const sniffed = listenerName(p.view.hostname, port);
      if (!names.has(sniffed)) continue;
      const vh = message(VirtualHostSchema, { ...virtualHostFields(p.view, port), domains: ["*"] });
      out.push({
        name: sniffed,
        schema: RouteConfigurationSchema,
        message: routeConfiguration(sniffed, [vh]),
      });
    }
  }
  return out.sort((a, b) => compareStrings(a.name, b.name));
}

function routeConfiguration(name: string, virtualHosts: VirtualHost[]): RouteConfiguration {
  return message(RouteConfigurationSchema, {
    name,
    virtualHosts,
    validateClusters: false,
    maxDirectResponseBodySizeBytes: MAX_DIRECT_RESPONSE_BODY_BYTES,
    ignorePortInHostMatching: true,
  });
}

/**
 * The virtual hosts of RouteConfiguration `<port>`: one `<host>:<port>` per service, domains
 * deduplicated across the configuration in hostname order (dedupeDomains; a host that loses every
 * domain is dropped), then sorted by name (util.SortVirtualHosts).
 */
function outboundVirtualHosts(
  list: readonly OutboundPort[],
  port: number,
  inputs: SidecarInputs,
): VirtualHost[] {
  const dnsDomain = inputs.proxy.parts.dnsDomain;
  const known = new Set<string>();
  for (const p of list) known.add(p.view.hostname).add(listenerName(p.view.hostname, port));
  const seen = new Set<string>();
  const out: VirtualHost[] = [];
  for (const p of [...list].sort((a, b) => compareStrings(a.view.hostname, b.view.hostname))) {
    const rec = recordFor(p.view, inputs);
    const { domains, alt } = serviceDomains(
      {
        hostname: p.view.hostname,
        addresses: serviceVips(p.view, inputs),
        headlessKubernetes:
          rec?.resolution === "Passthrough" &&
          kubeServiceNamespace(p.view.hostname, inputs.mesh.domainSuffix) !== undefined,
      },
      dnsDomain,
    );
    const kept = dedupeDomains(domains, seen, alt, known);
    if (kept.length === 0) continue;
    out.push(message(VirtualHostSchema, { ...virtualHostFields(p.view, port), domains: kept }));
  }
  return out.sort((a, b) => compareStrings(a.name, b.name));
}

/**
 * A service's virtual host on `port` without its domains: name `<host>:<port>`, the
 * VirtualService's routes for the port (route-vs-sidecar.ts: the proxyless mapping, sidecar timeouts, retries, decorators), else the
 * default route to `outbound|<port>||<host>`; include_request_attempt_count as istiod sets it.
 */
function virtualHostFields(view: ServiceView, port: number) {
  const name = listenerName(view.hostname, port);
  let routes: Route[] = sidecarVirtualServiceRoutes(view, port);
  if (routes.length === 0)
    routes = [
      defaultOutboundRoute(
        clusterName(view.hostname, port),
        `${name}/*`,
        defaultRouteHashPolicies(view, port),
      ),
    ];
  return { name, routes, includeRequestAttemptCount: true };
}
