/**
 * The clusters that do not come from a service a sidecar sees, as istiod builds them for a sidecar
 * (pilot/pkg/networking/core/cluster.go buildClusters, buildInboundClusters; cluster_builder.go
 * buildInboundCluster, buildBlackHoleCluster, buildDefaultPassthroughCluster,
 * buildInboundPassthroughCluster), Istio 1.2x naming: `BlackHoleCluster`, `PassthroughCluster`,
 * `InboundPassthroughCluster` (one cluster for both IP families since the IPv4/IPv6 pair was merged),
 * and `inbound|<targetPort>||` per port of the proxy's service instances.
 */
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import {
  BindConfigSchema,
  ExtraSourceAddressSchema,
  SocketAddressSchema,
} from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { portLevelPolicy } from "../../../registry/istio/traffic-policy.ts";
import type { Generated } from "../../types.ts";
import { durationOf } from "../cluster-policy.ts";
import { message } from "../shared.ts";
import { applyTrafficPolicy, type BuildContext, draftCluster, finishCluster } from "./cluster-build.ts";
import {
  altStatName,
  inboundClusterName,
  packHttpOptions,
  passthroughHttpOptions,
} from "./cluster-common.ts";
import { applyConnectionPool, type ClusterDraft } from "./cluster-traffic.ts";
import { ingressClusters } from "./inbound-ingress.ts";
import type { ServiceInstance, SidecarInputs } from "./types.ts";

/** util.BlackHoleCluster, util.PassthroughCluster, util.InboundPassthroughCluster. */
export const BLACK_HOLE_CLUSTER = "BlackHoleCluster";
export const PASSTHROUGH_CLUSTER = "PassthroughCluster";
export const INBOUND_PASSTHROUGH_CLUSTER = "InboundPassthroughCluster";
/** InboundPassthroughBindIpv4/Ipv6: the source address iptables lets through instead of looping it back. */
const BIND_V4 = "127.0.0.6";
const BIND_V6 = "::6";
/** maxSecondsValue: inbound ORIGINAL_DST clusters never clean up their hosts (about 292 years). */
const NEVER_SECONDS = 9_223_372_035n;

/** buildBlackHoleCluster: STATIC with no endpoints, so whatever is routed to it fails. */
export function blackHoleCluster(ctx: BuildContext): Generated<typeof ClusterSchema> {
  const c = message(ClusterSchema, {
    name: BLACK_HOLE_CLUSTER,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.STATIC },
    connectTimeout: durationOf(ctx.mesh.connectTimeoutMs),
    lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
    altStatName: altStatName(BLACK_HOLE_CLUSTER),
  });
  return { name: BLACK_HOLE_CLUSTER, schema: ClusterSchema, message: c };
}

/**
 * buildDefaultPassthroughCluster: ORIGINAL_DST, CLUSTER_PROVIDED, the passthrough HTTP options
 * (downstream protocol, 5 minute idle timeout) and the default circuit breakers.
 */
export function passthroughCluster(ctx: BuildContext): Generated<typeof ClusterSchema> {
  return {
    name: PASSTHROUGH_CLUSTER,
    schema: ClusterSchema,
    message: message(ClusterSchema, passthroughFields(ctx)),
  };
}

function passthroughFields(ctx: BuildContext): Partial<Cluster> {
  const d: ClusterDraft = {
    fields: {
      name: PASSTHROUGH_CLUSTER,
      clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.ORIGINAL_DST },
      lbPolicy: Cluster_LbPolicy.CLUSTER_PROVIDED,
      typedExtensionProtocolOptions: packHttpOptions(passthroughHttpOptions()),
      altStatName: altStatName(PASSTHROUGH_CLUSTER),
    },
    http: undefined,
  };
  applyConnectionPool(d, {}, ctx.mesh.connectTimeoutMs);
  return d.fields;
}

/**
 * buildInboundPassthroughCluster: the passthrough cluster renamed (its alt_stat_name stays
 * `PassthroughCluster;`, as istiod copies it), bound to 127.0.0.6 (::6 for an IPv6-only proxy; both
 * for a dual-stack one) so iptables does not capture the traffic again.
 */
export function inboundPassthroughCluster(ctx: BuildContext): Generated<typeof ClusterSchema> {
  const v4 = ctx.proxyIps.some((ip) => !ip.includes(":"));
  const v6 = ctx.proxyIps.some((ip) => ip.includes(":"));
  const c = message(ClusterSchema, {
    ...passthroughFields(ctx),
    name: INBOUND_PASSTHROUGH_CLUSTER,
    upstreamBindConfig: create(BindConfigSchema, {
      sourceAddress: socket(v4 || !v6 ? BIND_V4 : BIND_V6),
      extraSourceAddresses: v4 && v6 ? [create(ExtraSourceAddressSchema, { address: socket(BIND_V6) })] : [],
    }),
  });
  return { name: INBOUND_PASSTHROUGH_CLUSTER, schema: ClusterSchema, message: c };
}

function socket(address: string) {
  return create(SocketAddressSchema, { address, portSpecifier: { case: "portValue", value: 0 } });
}

/**
 * buildInboundClusters without a Sidecar ingress listener (with one: ingressClusters): one `inbound|<targetPort>||` per target
 * port of the proxy's service instances, ascending; the first instance of a port is the primary
 * (its service port's protocol picks the upstream protocol). Istio 1.10+ forwards to the pod IP, so
 * each is ORIGINAL_DST (CLUSTER_PROVIDED, never cleaned up) bound to 127.0.0.6 (::6 on IPv6-only);
 * its connection pool comes from the DestinationRule of the primary's service, port-level first.
 * `istio` metadata lists every service on that service port, once per host.
 */
export function inboundClusters(inputs: SidecarInputs, ctx: BuildContext): Generated<typeof ClusterSchema>[] {
  // A Sidecar with ingress listeners: the inbound clusters are its listeners' (inbound-ingress.ts).
  if (inputs.ingress) return ingressClusters(inputs, inputs.ingress, ctx);
  const byPort = new Map<number, ServiceInstance[]>();
  for (const inst of inputs.instances) {
    const list = byPort.get(inst.targetPort) ?? [];
    list.push(inst);
    byPort.set(inst.targetPort, list);
  }
  const v4 = inputs.proxy.ipAddresses.some((ip) => !ip.includes(":"));
  const out: Generated<typeof ClusterSchema>[] = [];
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    const instances = byPort.get(port) ?? [];
    const primary = instances[0];
    if (!primary) continue;
    const name = inboundClusterName(port);
    const protocol = primary.servicePort.protocol;
    const d = draftCluster(name, Cluster_DiscoveryType.ORIGINAL_DST, protocol, [], ctx);
    if (!d) continue;
    d.fields.cleanupInterval = create(DurationSchema, { seconds: NEVER_SECONDS });
    const dr = inputs.services.find((v) => v.hostname === primary.service.hostname)?.destinationRule;
    const policy = dr?.trafficPolicy
      ? portLevelPolicy(dr.trafficPolicy, primary.servicePort.port).policy
      : undefined;
    applyTrafficPolicy(d, policy, protocol, ctx, undefined);
    d.fields.upstreamBindConfig = create(BindConfigSchema, { sourceAddress: socket(v4 ? BIND_V4 : BIND_V6) });
    const seen = new Set<string>();
    const services = primary.service.meshExternal
      ? undefined
      : instances
          .filter((i) => i.servicePort.port === primary.servicePort.port)
          .map((i) => i.service)
          .filter((s) => !seen.has(s.hostname) && seen.add(s.hostname));
    const rule = dr?.trafficPolicy ? { name: dr.name, namespace: dr.namespace } : undefined;
    out.push({
      name,
      schema: ClusterSchema,
      message: finishCluster(d, { ...(services && { services }), ...(rule && { rule }) }),
    });
  }
  return out;
}
