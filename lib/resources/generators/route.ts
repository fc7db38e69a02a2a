/** RDS for proxyless gRPC: one RouteConfiguration per service port, one virtual host, its routes. */
import {
  type Route,
  type RouteAction_HashPolicy,
  RouteActionSchema,
  RouteMatchSchema,
  RouteSchema,
  VirtualHostSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../gen/envoy/config/route/v3/route_pb.ts";
import type { GenerateContext, Generated, Generator, ServiceView } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";
import { defaultRouteHashPolicy, virtualServiceRoutes } from "./route-vs.ts";
import { clusterName, listenerName, mergedPorts, message } from "./shared.ts";

/**
 * One RouteConfiguration `<host>:<port>` per merged service port, ascending by port: a virtual
 * host `<host>:<port>` whose domains cover every authority a client may dial (see
 * virtualHostDomains) holding the view's VirtualService routes for the port in order (route-vs.ts),
 * as istiod sends them: no default route after them, so a call no route matches fails with
 * UNAVAILABLE, as Envoy answers 404 NR. Without a VirtualService, or one with no route for the port:
 * the default route alone, prefix "/" to cluster `outbound|<port>||<host>`.
 */
export const routeGenerator: Generator = {
  typeUrl: TypeUrl.route,
  generate(view, ctx) {
    return mergedPorts(view).map((p): Generated<typeof RouteConfigurationSchema> => {
      const name = listenerName(view.hostname, p.port);
      return {
        name,
        schema: RouteConfigurationSchema,
        message: routeConfiguration(view, name, p.port, ctx),
      };
    });
  },
};

function routeConfiguration(
  view: ServiceView,
  name: string,
  port: number,
  ctx: GenerateContext,
): RouteConfiguration {
  const routes = virtualServiceRoutes(view, port);
  if (routes.length === 0)
    routes.push(defaultRoute(clusterName(view.hostname, port), defaultRouteHashPolicy(view, port)));
  return message(RouteConfigurationSchema, {
    name,
    virtualHosts: [
      message(VirtualHostSchema, {
        name,
        domains: virtualHostDomains(view.hostname, port, ctx.domainSuffix),
        routes,
      }),
    ],
  });
}

/**
 * The route every service gets without a VirtualService: prefix "/" to its own default cluster,
 * with the DestinationRule's header hash policy when its policy for the port hashes on a header.
 */
function defaultRoute(cluster: string, hashPolicy: RouteAction_HashPolicy[]): Route {
  return message(RouteSchema, {
    name: "default",
    match: message(RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }),
    action: {
      case: "route",
      value: message(RouteActionSchema, {
        clusterSpecifier: { case: "cluster", value: cluster },
        ...(hashPolicy.length > 0 && { hashPolicy }),
      }),
    },
  });
}

/**
 * The authorities a client may use for `<host>:<port>`, each with and without the port: the host,
 * and for a Kubernetes host `<name>.<ns>.svc.<suffix>` the short forms Istio adds for a client in
 * the same namespace (`<name>`, `<name>.<ns>.svc`, `<name>.<ns>`), in Istio's order, no duplicates.
 * Resources are shared by every client, so the same-namespace forms are always included; they
 * cannot clash, because each RouteConfiguration has a single virtual host.
 */
export function virtualHostDomains(hostname: string, port: number, domainSuffix: string): string[] {
  const hosts = [hostname];
  const kubeSuffix = `.svc.${domainSuffix}`;
  if (domainSuffix !== "" && hostname.endsWith(kubeSuffix)) {
    const nameAndNs = hostname.slice(0, -kubeSuffix.length);
    const dot = nameAndNs.indexOf(".");
    if (dot > 0 && dot < nameAndNs.length - 1) {
      hosts.push(nameAndNs.slice(0, dot), `${nameAndNs}.svc`, nameAndNs);
    }
  }
  const out: string[] = [];
  for (const h of hosts) {
    for (const d of [h, `${h}:${port}`]) if (!out.includes(d)) out.push(d);
  }
  return out;
}
