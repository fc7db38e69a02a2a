/** Readers for sidecar Listener/RouteConfiguration tests: what a chain's filter says, in plain values. */
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import type { FilterChain } from "../../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { Listener } from "../../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteConfiguration } from "../../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import {
  type HttpConnectionManager,
  HttpConnectionManagerSchema,
} from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  type TcpProxy,
  TcpProxySchema,
} from "../../../../lib/gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import type { Generated } from "../../../../lib/resources/types.ts";

/** The chain's HttpConnectionManager, or undefined. */
export function hcmOf(chain: FilterChain | undefined): HttpConnectionManager | undefined {
  const f = chain?.filters.find((x) => x.name === "envoy.filters.network.http_connection_manager");
  return f?.configType.case === "typedConfig"
    ? anyUnpack(f.configType.value, HttpConnectionManagerSchema)
    : undefined;
}

/** The chain's tcp_proxy, or undefined. */
export function tcpOf(chain: FilterChain | undefined): TcpProxy | undefined {
  const f = chain?.filters.find((x) => x.name === "envoy.filters.network.tcp_proxy");
  return f?.configType.case === "typedConfig" ? anyUnpack(f.configType.value, TcpProxySchema) : undefined;
}

/** The RDS name an HCM takes, or undefined. */
export function rdsOf(chain: FilterChain | undefined): string | undefined {
  const s = hcmOf(chain)?.routeSpecifier;
  return s?.case === "rds" ? s.value.routeConfigName : undefined;
}

/** The cluster a chain's tcp_proxy names, or undefined. */
export function tcpClusterOf(chain: FilterChain | undefined): string | undefined {
  const s = tcpOf(chain)?.clusterSpecifier;
  return s?.case === "cluster" ? s.value : undefined;
}

/** A generated resource by name (throws when missing, naming what exists). */
export function byName<T extends Generated>(list: readonly T[], name: string): T["message"] {
  const g = list.find((x) => x.name === name);
  if (!g) throw new Error(`no ${name}; have ${list.map((x) => x.name).join(", ")}`);
  return g.message;
}

/** A listener by name. */
export const listener = (list: readonly Generated[], name: string) => byName(list, name) as Listener;
/** A RouteConfiguration by name. */
export const routeConfig = (list: readonly Generated[], name: string) =>
  byName(list, name) as RouteConfiguration;

/** Each virtual host as [name, domains], in order. */
export function vhosts(rc: RouteConfiguration): [string, string[]][] {
  return rc.virtualHosts.map((v) => [v.name, [...v.domains]]);
}

/** Each route of a virtual host as [name, cluster or weighted clusters or direct status]. */
export function routesOf(rc: RouteConfiguration, vhost: string): [string, string][] {
  const vh = rc.virtualHosts.find((v) => v.name === vhost);
  return (vh?.routes ?? []).map((r) => {
    if (r.action.case === "directResponse") return [r.name, `direct ${r.action.value.status}`];
    if (r.action.case !== "route") return [r.name, ""];
    const c = r.action.value.clusterSpecifier;
    if (c.case === "cluster") return [r.name, c.value];
    if (c.case === "weightedClusters")
      return [r.name, c.value.clusters.map((w) => `${w.name}=${w.weight}`).join(",")];
    return [r.name, ""];
  });
}
