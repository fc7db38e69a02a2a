/**
 * CDS for an Envoy sidecar (istiod's ConfigGeneratorImpl.buildClusters for a SidecarProxy,
 * pilot/pkg/networking/core/cluster.go): the outbound clusters of every visible service, in the
 * order given, then `BlackHoleCluster` and `PassthroughCluster`, the proxy's `inbound|<port>||`
 * clusters, and `InboundPassthroughCluster`. A name built twice keeps its first cluster
 * (normalizeClusters). Pure: inputs in, Clusters out. Written against istio/istio
 * pilot/pkg/networking/core as stored at commit 00ce34c6 (cluster_builder.go; Istio 1.2x: one
 * InboundPassthroughCluster, LEAST_REQUEST by default, alt_stat_name `<name>;`).
 *
 * Sharing: outboundClusters depends only on the service view (with the DestinationRule chosen for
 * the proxy's namespace), the mesh settings, the push's PeerAuthentications (auto mTLS per
 * destination namespace) and the proxy's IP family (DNS lookup family), so the outbound set is
 * shared by every proxy with the same view and family; BlackHole/Passthrough
 * depend on the mesh alone, InboundPassthrough on the IP family; only `inbound|<port>||` is per proxy.
 */
import type { ClusterSchema } from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Generated } from "../../types.ts";
import type { BuildContext } from "./cluster-build.ts";
import {
  blackHoleCluster,
  inboundClusters,
  inboundPassthroughCluster,
  passthroughCluster,
} from "./cluster-inbound.ts";
import { outboundClusters } from "./cluster-outbound.ts";
import type { SidecarInputs } from "./types.ts";

export {
  BLACK_HOLE_CLUSTER,
  INBOUND_PASSTHROUGH_CLUSTER,
  PASSTHROUGH_CLUSTER,
} from "./cluster-inbound.ts";
export { outboundClusters, sidecarDiscoveryType } from "./cluster-outbound.ts";

/** Every Cluster one sidecar gets, in istiod's order, names unique. */
export function sidecarClusters(inputs: SidecarInputs): Generated<typeof ClusterSchema>[] {
  const ctx: BuildContext = {
    mesh: inputs.mesh,
    proxyIps: inputs.proxy.ipAddresses,
    ...(inputs.security && { security: inputs.security }),
  };
  const all = [
    ...inputs.services.flatMap((v) => outboundClusters(v, ctx)),
    blackHoleCluster(ctx),
    passthroughCluster(ctx),
    ...inboundClusters(inputs, ctx),
    inboundPassthroughCluster(ctx),
  ];
  const seen = new Set<string>();
  return all.filter((c) => !seen.has(c.name) && seen.add(c.name));
}
