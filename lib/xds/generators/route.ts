/** RDS for proxyless gRPC: one RouteConfiguration per service port, one virtual host, one route. */
import {
  RouteActionSchema,
  RouteMatchSchema,
  RouteSchema,
  VirtualHostSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../gen/envoy/config/route/v3/route_pb.ts";
import { type GenerateContext, type Generated, type Generator, TypeUrl } from "../types.ts";
import { clusterName, listenerName, mergedPorts, message } from "./shared.ts";

/**
 * One RouteConfiguration `<host>:<port>` per merged service port, ascending by port: a virtual
 * host `<host>:<port>` whose domains cover every authority a client may dial (see
 * virtualHostDomains) and one route, prefix "/", to cluster `outbound|<port>||<host>`.
 */
export const routeGenerator: Generator = {
  typeUrl: TypeUrl.route,
  generate(view, ctx) {
    return mergedPorts(view).map((p): Generated<typeof RouteConfigurationSchema> => {
      const name = listenerName(view.hostname, p.port);
      return {
        name,
        schema: RouteConfigurationSchema,
        message: routeConfiguration(name, view.hostname, p.port, ctx),
      };
    });
  },
};

function routeConfiguration(
  name: string,
  hostname: string,
  port: number,
  ctx: GenerateContext,
): RouteConfiguration {
  return message(RouteConfigurationSchema, {
    name,
    virtualHosts: [
      message(VirtualHostSchema, {
        name,
        domains: virtualHostDomains(hostname, port, ctx.domainSuffix),
        routes: [
          message(RouteSchema, {
            name: "default",
            match: message(RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }),
            action: {
              case: "route",
              value: message(RouteActionSchema, {
                clusterSpecifier: { case: "cluster", value: clusterName(hostname, port) },
              }),
            },
          }),
        ],
      }),
    ],
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
