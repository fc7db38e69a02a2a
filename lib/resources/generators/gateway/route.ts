/**
 * RDS for a gateway proxy, as istiod's buildGatewayHTTPRouteConfig builds it
 * (pilot/pkg/networking/core/gateway.go: collapseDuplicateRoutes, SortVHostRoutes,
 * SortVirtualHosts): one RouteConfiguration per RDS name the listeners take (`http.<port>`,
 * `https.<port>.<portName>.<gw>.<ns>`). For each server of the name, each VirtualService bound to its
 * Gateway and exported to the proxy's namespace whose hosts intersect the server's (a server host's
 * namespace prefix limits which namespaces' VirtualServices apply) gives, per intersecting host, a
 * virtual host `<host>:<port>` with the single domain `<host>` and its routes for the server port
 * (the sidecar's route translation, route-vs-sidecar.ts); the same host from two VirtualServices
 * appends routes; `httpsRedirect` requires TLS; virtual hosts with the same routes are collapsed
 * into the first by name; nothing bound ▶ the 404 `blackhole:<port>` virtual host. Pure.
 */
import type { Route, VirtualHost } from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  VirtualHost_TlsRequirementType,
  VirtualHostSchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../../gen/envoy/config/route/v3/route_pb.ts";
import type { MergedServer } from "../../../registry/istio/gateway-merge.ts";
import {
  type GatewayVirtualService,
  intersectHosts,
  virtualServicesForGateway,
} from "../../../registry/istio/gateway-routes.ts";
import type { Generated, ServiceView } from "../../types.ts";
import { compareStrings, message } from "../shared.ts";
import { sidecarVirtualServiceRoutes } from "../sidecar/route-vs-sidecar.ts";
import { portsOf } from "./listener.ts";
import type { GatewayInputs } from "./types.ts";

/** route.DefaultMaxDirectResponseBodySizeBytes: 1 MiB. */
const MAX_DIRECT_RESPONSE_BODY_BYTES = 1024 * 1024;

interface Draft {
  name: string;
  domains: string[];
  routes: Route[];
  requireTls: boolean;
}

/** The gateway's RouteConfigurations, sorted by name (one per RDS name of its merged servers). */
export function gatewayRouteConfigurations(
  inputs: GatewayInputs,
): Generated<typeof RouteConfigurationSchema>[] {
  const out: Generated<typeof RouteConfigurationSchema>[] = [];
  for (const [name, servers] of inputs.merged.serversByRoute) {
    if (servers.length === 0) continue;
    out.push({ name, schema: RouteConfigurationSchema, message: routeConfiguration(name, servers, inputs) });
  }
  return out.sort((a, b) => compareStrings(a.name, b.name));
}

function routeConfiguration(
  name: string,
  servers: readonly MergedServer[],
  inputs: GatewayInputs,
): RouteConfiguration {
  const byHost = new Map<string, Draft>();
  // Per gateway and VirtualService, the routes are built once (istiod's gatewayRoutes cache).
  const built = new Map<string, Route[]>();
  for (const m of servers) {
    const port = m.server.port.number;
    const redirect = m.server.tls?.httpsRedirect === true;
    for (const vs of virtualServicesForGateway(
      inputs.virtualServices,
      inputs.proxy.namespace,
      m.gatewayName,
    )) {
      const hosts = intersectHosts(m.server.hosts, vs.namespace, vs.hosts);
      if (hosts.length === 0) continue;
      const key = `${m.gatewayName}\n${vs.name}/${vs.namespace}`;
      let routes = built.get(key);
      if (!routes) {
        routes = sidecarVirtualServiceRoutes(routeView(vs, m.gatewayName, inputs), port);
        built.set(key, routes);
      }
      for (const h of hosts) {
        const host = h.toLowerCase();
        const d = byHost.get(host);
        if (d) {
          d.routes.push(...routes);
          if (redirect) d.requireTls = true;
        } else
          byHost.set(host, {
            name: `${host}:${port}`,
            domains: [host],
            routes: [...routes],
            requireTls: redirect,
          });
      }
    }
    if (!redirect) continue;
    for (const h of m.server.hosts) {
      const host = h.toLowerCase();
      const d = byHost.get(host);
      if (d) d.requireTls = true;
      else byHost.set(host, { name: `${host}:${port}`, domains: [host], routes: [], requireTls: true });
    }
  }
  const first = servers[0] as MergedServer;
  const virtualHosts =
    byHost.size === 0
      ? [message(VirtualHostSchema, { name: `blackhole:${first.server.port.number}`, domains: ["*"] })]
      : collapse(byHost).map(toVirtualHost);
  virtualHosts.sort((a, b) => compareStrings(a.name, b.name));
  return message(RouteConfigurationSchema, {
    name,
    virtualHosts,
    validateClusters: false,
    ignorePortInHostMatching: true,
    maxDirectResponseBodySizeBytes: MAX_DIRECT_RESPONSE_BODY_BYTES,
  });
}

/**
 * The VirtualService as the sidecar route translation reads it for one gateway: a view of no
 * service of its own (no destination is its own host), the ports of the services it routes to.
 */
function routeView(vs: GatewayVirtualService, gateway: string, inputs: GatewayInputs): ServiceView {
  const model = vs.httpFor(gateway);
  const destinationPorts: Record<string, number[]> = {};
  for (const r of model.http) {
    const hosts = [
      ...(r.action.kind === "route" ? r.action.destinations.map((d) => d.host) : []),
      ...(r.mirrors ?? []).map((mi) => mi.destination.host),
    ];
    for (const h of hosts) {
      if (Object.hasOwn(destinationPorts, h)) continue;
      const ports = portsOf(inputs, h);
      if (ports) destinationPorts[h] = ports;
    }
  }
  return {
    hostname: "",
    namespace: vs.namespace,
    services: [],
    shards: undefined,
    virtualService: model,
    destinationPorts,
  };
}

/**
 * collapseDuplicateRoutes: in hostname order, a virtual host whose routes are the very routes of an
 * earlier one (same objects, same TLS requirement) joins its domains to it.
 */
function collapse(byHost: ReadonlyMap<string, Draft>): Draft[] {
  const kept: Draft[] = [];
  for (const host of [...byHost.keys()].sort(compareStrings)) {
    const d = byHost.get(host) as Draft;
    const same = kept.find(
      (k) =>
        k.requireTls === d.requireTls &&
        k.routes.length === d.routes.length &&
        k.routes.every((r, i) => r === d.routes[i]),
    );
    if (same) same.domains.push(...d.domains);
    else kept.push({ ...d, domains: [...d.domains] });
  }
  return kept;
}

/** SortVHostRoutes (catch-all routes last, order kept otherwise), as a VirtualHost. */
function toVirtualHost(d: Draft): VirtualHost {
  const catchAll = d.routes.filter(isCatchAll);
  const routes = [...d.routes.filter((r) => !isCatchAll(r)), ...catchAll];
  return message(VirtualHostSchema, {
    name: d.name,
    domains: d.domains,
    routes,
    includeRequestAttemptCount: true,
    ...(d.requireTls && { requireTls: VirtualHost_TlsRequirementType.ALL }),
  });
}

/** IsCatchAllRoute: path prefix `/` (or regex `.*`) with no header or query condition. */
function isCatchAll(r: Route): boolean {
  const m = r.match;
  if (!m) return false;
  const p = m.pathSpecifier;
  const any =
    (p.case === "prefix" && p.value === "/") ||
    (p.case === "pathSeparatedPrefix" && p.value === "/") ||
    (p.case === "safeRegex" && p.value.regex === ".*");
  return any && m.headers.length === 0 && m.queryParameters.length === 0 && m.dynamicMetadata.length === 0;
}
