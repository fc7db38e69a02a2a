/**
 * CDS for a gateway proxy, as istiod's buildClusters builds it for a `router` (pilot/pkg/networking/
 * core/cluster.go, the gateway case): the outbound clusters of every service visible to the proxy's
 * namespace (the sidecar's builder, cluster-outbound.ts, with the DestinationRule chosen there),
 * then `BlackHoleCluster`, then, when a server is AUTO_PASSTHROUGH, the SNI DNAT clusters
 * (sni-dnat.ts); no passthrough or inbound clusters (a gateway has no original-destination
 * listener). A name built twice keeps its first cluster (normalizeClusters). Pure.
 */
import type { ClusterSchema } from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Generated } from "../../types.ts";
import type { BuildContext } from "../sidecar/cluster-build.ts";
import { blackHoleCluster } from "../sidecar/cluster-inbound.ts";
import { outboundClusters } from "../sidecar/cluster-outbound.ts";
import { sniDnatClusters } from "./sni-dnat.ts";
import type { GatewayInputs } from "./types.ts";

/** Every Cluster one gateway class gets, in istiod's order, names unique. */
export function gatewayClusters(inputs: GatewayInputs): Generated<typeof ClusterSchema>[] {
  const ctx: BuildContext = {
    mesh: inputs.mesh,
    proxyIps: inputs.proxy.ipAddresses,
    ...(inputs.security && { security: inputs.security }),
  };
  const all = [
    ...inputs.services.flatMap((v) => outboundClusters(v, ctx)),
    blackHoleCluster(ctx),
    ...(inputs.merged.autoPassthrough ? sniDnatClusters(inputs.services, ctx) : []),
  ];
  const seen = new Set<string>();
  return all.filter((c) => !seen.has(c.name) && seen.add(c.name));
}
