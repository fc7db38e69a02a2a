/**
 * The steps every sidecar Cluster goes through in istiod (pilot/pkg/networking/core/cluster_builder.go
 * buildCluster, cluster_traffic_policy.go applyTrafficPolicy, maybeApplyEdsConfig, clusterWrapper.build):
 * a draft with the discovery type, its DNS settings or load assignment, and the port's upstream
 * protocol; the traffic policy; then the EDS config, metadata and packed HTTP options.
 */
import { create } from "@bufbuild/protobuf";
import {
  type Cluster,
  Cluster_CommonLbConfigSchema,
  Cluster_DiscoveryType,
  Cluster_DnsLookupFamily,
  Cluster_EdsClusterConfigSchema,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import {
  AggregatedConfigSourceSchema,
  ApiVersion,
  ConfigSourceSchema,
} from "../../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { Endpoint, Protocol } from "../../../model/index.ts";
import type { SecurityPolicies } from "../../../registry/istio/security.ts";
import type { EffectivePolicy } from "../../../registry/istio/traffic-policy.ts";
import { durationOf } from "../cluster-policy.ts";
import { loadAssignment } from "../endpoint.ts";
import { deepFreeze, message } from "../shared.ts";
import {
  altStatName,
  type IstioMetadata,
  istioMetadata,
  packHttpOptions,
  upstreamFor,
} from "./cluster-common.ts";
import { applyUpstreamTls, type TlsInputs } from "./cluster-tls.ts";
import {
  applyConnectionPool,
  applyH2Upgrade,
  applyLoadBalancer,
  applyOutlierDetection,
  type ClusterDraft,
  discoveryType,
} from "./cluster-traffic.ts";
import type { SidecarMeshSettings } from "./types.ts";

/** Istio's MeshConfig default dnsRefreshRate. */
const DEFAULT_DNS_REFRESH_MS = 60_000;

/** What a draft needs from the proxy and the mesh (its IP family picks the DNS lookup family). */
export interface BuildContext {
  mesh: SidecarMeshSettings;
  proxyIps: readonly string[];
  /** The push's PeerAuthentications (auto mTLS infers a destination's mode from them); absent: none. */
  security?: SecurityPolicies;
}

/**
 * buildCluster: the draft of one cluster. A STRICT_DNS / LOGICAL_DNS / STATIC cluster without
 * endpoints is not built (undefined), as istiod skips it (DNSNoEndpointClusters); a LOGICAL_DNS
 * cluster carries its first endpoint only.
 */
export function draftCluster(
  name: string,
  type: Cluster_DiscoveryType,
  protocol: Protocol,
  endpoints: readonly Endpoint[],
  ctx: BuildContext,
): ClusterDraft | undefined {
  const fields: Partial<Cluster> = {
    name,
    clusterDiscoveryType: { case: "type", value: type },
    commonLbConfig: create(Cluster_CommonLbConfigSchema),
    altStatName: altStatName(name),
  };
  const dns = type === Cluster_DiscoveryType.STRICT_DNS || type === Cluster_DiscoveryType.LOGICAL_DNS;
  if (dns) {
    fields.dnsLookupFamily = lookupFamily(ctx.proxyIps);
    fields.dnsRefreshRate = durationOf(ctx.mesh.dnsRefreshRateMs ?? DEFAULT_DNS_REFRESH_MS);
    fields.respectDnsTtl = true;
  }
  if (dns || type === Cluster_DiscoveryType.STATIC) {
    if (endpoints.length === 0) return undefined;
    // Envoy NACKs a LOGICAL_DNS cluster with more than one locality or endpoint ("LOGICAL_DNS
    // clusters must have a single locality_lb_endpoint and a single lb_endpoint"); istiod keeps
    // one by validation (DNS_ROUND_ROBIN takes 0 or 1 endpoint) and by keeping the instances of
    // one ServiceEntry only (istio/istio#41811, #41831). Hosts merged from several records: the first.
    const kept = type === Cluster_DiscoveryType.LOGICAL_DNS ? endpoints.slice(0, 1) : endpoints;
    fields.loadAssignment = loadAssignment(name, kept);
  }
  return { fields, http: upstreamFor(protocol) };
}

/** All proxy IPs IPv4 ▶ V4_ONLY; all IPv6 ▶ V6_ONLY; dual stack ▶ V4_ONLY (istiod with dual stack off). */
function lookupFamily(ips: readonly string[]): Cluster_DnsLookupFamily {
  const v6 = ips.length > 0 && ips.every((ip) => ip.includes(":"));
  return v6 ? Cluster_DnsLookupFamily.V6_ONLY : Cluster_DnsLookupFamily.V4_ONLY;
}

/**
 * applyTrafficPolicy: the connection pool always (an empty one gives the defaults); outbound also
 * the h2 upgrade, outlier detection, load balancer and upstream TLS; ORIGINAL_DST is CLUSTER_PROVIDED.
 */
export function applyTrafficPolicy(
  d: ClusterDraft,
  policy: EffectivePolicy | undefined,
  protocol: Protocol,
  ctx: BuildContext,
  outbound: TlsInputs | undefined,
): void {
  const pool = policy?.connectionPool ?? {};
  applyConnectionPool(d, pool, ctx.mesh.connectTimeoutMs);
  if (outbound) {
    applyH2Upgrade(d, protocol, pool);
    applyOutlierDetection(d, policy?.outlierDetection);
    applyLoadBalancer(d, policy?.loadBalancer);
    applyUpstreamTls(d, policy?.tls, outbound);
  }
  if (discoveryType(d) === Cluster_DiscoveryType.ORIGINAL_DST)
    d.fields.lbPolicy = Cluster_LbPolicy.CLUSTER_PROVIDED;
}

/** maybeApplyEdsConfig: endpoints over ADS under the cluster's own name, no initial fetch timeout (0s). */
const EDS_CONFIG = deepFreeze(
  create(ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: create(AggregatedConfigSourceSchema) },
    initialFetchTimeout: durationOf(0),
    resourceApiVersion: ApiVersion.V3,
  }),
);

/** The finished Cluster: EDS config for an EDS cluster, the `istio` metadata, the packed HTTP options. */
export function finishCluster(d: ClusterDraft, meta: IstioMetadata): Cluster {
  const f = d.fields;
  if (discoveryType(d) === Cluster_DiscoveryType.EDS)
    f.edsClusterConfig = create(Cluster_EdsClusterConfigSchema, {
      edsConfig: EDS_CONFIG,
      serviceName: f.name ?? "",
    });
  const metadata = istioMetadata(meta);
  if (metadata) f.metadata = metadata;
  const options = packHttpOptions(d.http);
  if (Object.keys(options).length > 0) f.typedExtensionProtocolOptions = options;
  return message(ClusterSchema, f);
}
