/** CDS for proxyless gRPC: one EDS cluster per service port, as Istio's grpcgen edsCluster. */
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_EdsClusterConfigSchema,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { type Generated, type Generator, TypeUrl } from "../types.ts";
import { adsConfigSource, clusterName, mergedPorts, message } from "./shared.ts";

/**
 * One Cluster `outbound|<port>||<host>` per merged service port, ascending by port: type EDS,
 * endpoints over ADS (v3) under the cluster's own name, ROUND_ROBIN (grpc-js-xds maps it to
 * xds_wrr_locality over round_robin; any other lb_policy without load_balancing_policy is a NACK).
 */
export const clusterGenerator: Generator = {
  typeUrl: TypeUrl.cluster,
  generate(view) {
    return mergedPorts(view).map((p): Generated<typeof ClusterSchema> => {
      const name = clusterName(view.hostname, p.port);
      return { name, schema: ClusterSchema, message: edsCluster(name) };
    });
  },
};

function edsCluster(name: string): Cluster {
  return message(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: message(Cluster_EdsClusterConfigSchema, {
      edsConfig: adsConfigSource(),
      serviceName: name,
    }),
    lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
  });
}
