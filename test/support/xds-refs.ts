/**
 * Cross-references of a complete xDS set, as Envoy (and go-control-plane's Snapshot.Consistent)
 * need them: every RouteConfiguration an HttpConnectionManager names through RDS is served; every
 * cluster a route (cluster, weighted_clusters, request mirrors), a tcp_proxy or a proxyless gRPC
 * route names exists; every EDS cluster has its ClusterLoadAssignment (eds_cluster_config's
 * service_name, else the cluster's name). Returns the dangling references, one line each.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  ClusterSchema,
} from "../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { FilterChain } from "../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteAction } from "../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { HttpConnectionManagerSchema } from "../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { TcpProxySchema } from "../../lib/gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { envoyTypes } from "./pgv/registry.ts";

const T = {
  cluster: `type.googleapis.com/${ClusterSchema.typeName}`,
  endpoint: `type.googleapis.com/${ClusterLoadAssignmentSchema.typeName}`,
  listener: `type.googleapis.com/${ListenerSchema.typeName}`,
  route: `type.googleapis.com/${RouteConfigurationSchema.typeName}`,
} as const;

/** One encoded resource of a set, as an Any carries it. */
export interface EncodedResource {
  typeUrl: string;
  value: Uint8Array;
}

/** The cluster names one RouteConfiguration's routes send traffic (or mirrors) to. */
function routeClusters(rc: RouteConfiguration): string[] {
  const out: string[] = [];
  const action = (a: RouteAction) => {
    const c = a.clusterSpecifier;
    if (c.case === "cluster") out.push(c.value);
    if (c.case === "weightedClusters") out.push(...c.value.clusters.map((w) => w.name));
    for (const m of a.requestMirrorPolicies) if (m.cluster) out.push(m.cluster);
  };
  for (const vh of rc.virtualHosts) {
    for (const m of vh.requestMirrorPolicies) if (m.cluster) out.push(m.cluster);
    for (const r of vh.routes) if (r.action.case === "route") action(r.action.value);
  }
  return out;
}

/** What an HttpConnectionManager or TcpProxy in an Any refers to. */
function networkFilterRefs(
  any: Any | undefined,
  where: string,
  routes: Set<string>,
  clusters: Set<string>,
  out: string[],
) {
  if (!any) return;
  const msg = anyUnpack(any, envoyTypes().registry);
  if (msg?.$typeName === HttpConnectionManagerSchema.typeName) {
    const hcm = msg as unknown as { routeSpecifier: { case?: string; value?: unknown } };
    const spec = hcm.routeSpecifier;
    if (spec.case === "rds") {
      const name = (spec.value as { routeConfigName: string }).routeConfigName;
      if (!routes.has(name))
        out.push(`${where}: RDS route_config_name ${JSON.stringify(name)} is not served`);
    } else if (spec.case === "routeConfig") {
      for (const c of routeClusters(spec.value as RouteConfiguration))
        if (!clusters.has(c))
          out.push(`${where} (inline route_config): cluster ${JSON.stringify(c)} does not exist`);
    }
  } else if (msg?.$typeName === TcpProxySchema.typeName) {
    const spec = (msg as unknown as { clusterSpecifier: { case?: string; value?: unknown } })
      .clusterSpecifier;
    const names =
      spec.case === "cluster"
        ? [spec.value as string]
        : spec.case === "weightedClusters"
          ? (spec.value as { clusters: { name: string }[] }).clusters.map((c) => c.name)
          : [];
    for (const c of names)
      if (!clusters.has(c)) out.push(`${where} (tcp_proxy): cluster ${JSON.stringify(c)} does not exist`);
  }
}

function listenerRefs(l: Listener, routes: Set<string>, clusters: Set<string>, out: string[]) {
  const where = `Listener ${JSON.stringify(l.name)}`;
  const chains: FilterChain[] = [...l.filterChains, ...(l.defaultFilterChain ? [l.defaultFilterChain] : [])];
  for (const chain of chains)
    for (const f of chain.filters)
      if (f.configType.case === "typedConfig")
        networkFilterRefs(f.configType.value, where, routes, clusters, out);
  networkFilterRefs(l.apiListener?.apiListener, where, routes, clusters, out);
}

/** The decoded resources of a set, by type (other types ignored). */
export function decodeSet(resources: Iterable<EncodedResource>) {
  const set = {
    clusters: [] as Cluster[],
    endpoints: [] as string[],
    listeners: [] as Listener[],
    routes: [] as RouteConfiguration[],
  };
  for (const r of resources) {
    if (r.typeUrl === T.cluster) set.clusters.push(fromBinary(ClusterSchema, r.value));
    else if (r.typeUrl === T.endpoint)
      set.endpoints.push(fromBinary(ClusterLoadAssignmentSchema, r.value).clusterName);
    else if (r.typeUrl === T.listener) set.listeners.push(fromBinary(ListenerSchema, r.value));
    else if (r.typeUrl === T.route) set.routes.push(fromBinary(RouteConfigurationSchema, r.value));
  }
  return set;
}

/** Every dangling reference in a complete set of Clusters, ClusterLoadAssignments, Listeners and Routes. */
export function danglingReferences(resources: Iterable<EncodedResource>): string[] {
  const set = decodeSet(resources);
  const clusters = new Set(set.clusters.map((c) => c.name));
  const routes = new Set(set.routes.map((r) => r.name));
  const assignments = new Set(set.endpoints);
  const out: string[] = [];
  for (const l of set.listeners) listenerRefs(l, routes, clusters, out);
  for (const rc of set.routes)
    for (const c of routeClusters(rc))
      if (!clusters.has(c))
        out.push(
          `RouteConfiguration ${JSON.stringify(rc.name)}: cluster ${JSON.stringify(c)} does not exist`,
        );
  for (const c of set.clusters) {
    const t = c.clusterDiscoveryType;
    if (t.case !== "type" || t.value !== Cluster_DiscoveryType.EDS) continue;
    const name = c.edsClusterConfig?.serviceName || c.name;
    if (!assignments.has(name))
      out.push(
        `Cluster ${JSON.stringify(c.name)}: EDS ClusterLoadAssignment ${JSON.stringify(name)} is not served`,
      );
  }
  return out;
}

/** Throws, listing them, when a complete set has dangling references. */
export function assertConsistent(resources: Iterable<EncodedResource>): void {
  const dangling = danglingReferences(resources);
  if (dangling.length > 0)
    throw new Error(`${dangling.length} dangling xDS reference(s):\n${dangling.slice(0, 50).join("\n")}`);
}
