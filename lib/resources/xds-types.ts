/**
 * The xDS types we serve, as data: one descriptor per type URL says everything the layers need to
 * know of it (its schema, how SotW subscribes to it, where it goes in a push and a removal, the
 * names of its REST path, Fetch RPC, metrics label, proxy-status column and config-dump section),
 * so a new type is one descriptor here plus its generator, and no list elsewhere restates them.
 * Generators stay registered by type URL (generators/index.ts), which checks it has one for each.
 */
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../gen/envoy/config/route/v3/route_pb.ts";
import { SecretSchema } from "../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import { ClusterDiscoveryService } from "../gen/envoy/service/cluster/v3/cds_pb.ts";
import { EndpointDiscoveryService } from "../gen/envoy/service/endpoint/v3/eds_pb.ts";
import { ListenerDiscoveryService } from "../gen/envoy/service/listener/v3/lds_pb.ts";
import { RouteDiscoveryService } from "../gen/envoy/service/route/v3/rds_pb.ts";
import { SecretDiscoveryService } from "../gen/envoy/service/secret/v3/sds_pb.ts";

/** One served xDS type; `Short` narrows its short name where the served list is known. */
export interface XdsType<Short extends string = string> {
  typeUrl: string;
  /** The resource message. */
  schema: DescMessage;
  /** Its key in TypeUrl and how debug pages name it (istiod's syncz fields: `cluster_sent`, ...). */
  short: Short;
  /** istiod's metric type (model.GetMetricType): the `type` label of pilot_xds_pushes and kin. */
  metric: string;
  /**
   * Its column in `proxy-status` and the column's place (istioctl's: CDS, LDS, EDS, RDS); none for
   * a type istioctl shows no column of (SDS), which still has its syncz fields.
   */
  column?: { name: string; rank: number };
  /** How `proxy-status <id>` titles its comparison (istioctl's). */
  title: string;
  /** SotW: a wildcard subscription exists (LDS and CDS, xDS protocol): the proxy gets the whole set. */
  wildcard: boolean;
  /** The type whose names this one's resources refer to (a Cluster's EDS name, a Listener's RDS name). */
  refersTo?: string;
  /** Its place among removals (listeners go first, endpoints last: break after everything moved). */
  removalRank: number;
  /** Envoy's REST subscription path. */
  restPath: string;
  /** Envoy's unary Fetch RPC: the service and its method's local name. */
  fetch: { service: DescService; method: string };
  /**
   * Served per proxy and never published with the shared resources (SDS: a gateway's
   * credentials): no generator output, no line in the published status.
   */
  perProxy?: true;
  /** Its section of Envoy's config dump, and how one resource is wrapped there. */
  dump: { type: string; list: string; wrap: (version: string, resource: unknown, name: string) => unknown };
}

const cluster = {
  typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  schema: ClusterSchema,
  short: "cluster",
  metric: "cds",
  column: { name: "CDS", rank: 0 },
  title: "Clusters",
  wildcard: true,
  refersTo: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  removalRank: 2,
  restPath: "/v3/discovery:clusters",
  fetch: { service: ClusterDiscoveryService, method: "fetchClusters" },
  dump: {
    type: "ClustersConfigDump",
    list: "dynamic_active_clusters",
    wrap: (v, r) => ({ version_info: v, cluster: r }),
  },
} as const satisfies XdsType;

const endpoint = {
  typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  schema: ClusterLoadAssignmentSchema,
  short: "endpoint",
  metric: "eds",
  column: { name: "EDS", rank: 2 },
  title: "Endpoints",
  wildcard: false,
  removalRank: 3,
  restPath: "/v3/discovery:endpoints",
  fetch: { service: EndpointDiscoveryService, method: "fetchEndpoints" },
  dump: {
    type: "EndpointsConfigDump",
    list: "dynamic_endpoint_configs",
    wrap: (v, r) => ({ version_info: v, endpoint_config: r }),
  },
} as const satisfies XdsType;

const listener = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  schema: ListenerSchema,
  short: "listener",
  metric: "lds",
  column: { name: "LDS", rank: 1 },
  title: "Listeners",
  wildcard: true,
  refersTo: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  removalRank: 0,
  restPath: "/v3/discovery:listeners",
  fetch: { service: ListenerDiscoveryService, method: "fetchListeners" },
  dump: {
    type: "ListenersConfigDump",
    list: "dynamic_listeners",
    wrap: (v, r, name) => ({ name, active_state: { version_info: v, listener: r } }),
  },
} as const satisfies XdsType;

const route = {
  typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  schema: RouteConfigurationSchema,
  short: "route",
  metric: "rds",
  column: { name: "RDS", rank: 3 },
  title: "Routes",
  wildcard: false,
  removalRank: 1,
  restPath: "/v3/discovery:routes",
  fetch: { service: RouteDiscoveryService, method: "fetchRoutes" },
  dump: {
    type: "RoutesConfigDump",
    list: "dynamic_route_configs",
    wrap: (v, r) => ({ version_info: v, route_config: r }),
  },
} as const satisfies XdsType;

const secret = {
  typeUrl: "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
  schema: SecretSchema,
  short: "secret",
  metric: "sds",
  title: "Secrets",
  wildcard: false,
  removalRank: 4,
  perProxy: true,
  restPath: "/v3/discovery:secrets",
  fetch: { service: SecretDiscoveryService, method: "fetchSecrets" },
  dump: {
    type: "SecretsConfigDump",
    list: "dynamic_active_secrets",
    // Names and versions only: a credential's key never leaves the proxy it is for (istiod redacts it).
    wrap: (v, _r, name) => ({ name, version_info: v }),
  },
} as const satisfies XdsType;

/** Every served type, in make-before-break push order: clusters, endpoints, listeners, routes, secrets. */
export const xdsTypes = [cluster, endpoint, listener, route, secret] as const;

type Served = (typeof xdsTypes)[number];

/** The short name of a served type: the keys of TypeUrl. */
export type XdsShort = Served["short"];

/** The type URLs we serve, by short name: one entry per descriptor, so a new type needs no line here. */
export const TypeUrl = Object.fromEntries(xdsTypes.map((t) => [t.short, t.typeUrl])) as {
  readonly [T in Served as T["short"]]: T["typeUrl"];
};
export type TypeUrl = Served["typeUrl"];

/** Make before break: clusters, then endpoints, then listeners, then routes, then secrets (Istio's order). */
export const pushOrder: readonly TypeUrl[] = xdsTypes.map((t) => t.typeUrl);

/** Break last: listeners, then routes, then clusters, then endpoints, then the secrets they name. */
export const removalOrder: readonly TypeUrl[] = [...xdsTypes]
  .sort((a, b) => a.removalRank - b.removalRank)
  .map((t) => t.typeUrl);

const byUrl: ReadonlyMap<string, XdsType<XdsShort>> = new Map(xdsTypes.map((t) => [t.typeUrl, t]));

/** The descriptor of a served type URL, or undefined for one we do not serve. */
export function xdsType(typeUrl: string): XdsType<XdsShort> | undefined {
  return byUrl.get(typeUrl);
}
