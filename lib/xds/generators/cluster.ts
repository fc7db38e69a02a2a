/** CDS for proxyless gRPC: one EDS cluster per service port and DestinationRule subset, as Istio's grpcgen. */
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_EdsClusterConfigSchema,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { effectivePolicy } from "../../registry/istio/destination-rule.ts";
import { type Generated, type Generator, TypeUrl } from "../types.ts";
import { policyFields } from "./cluster-policy.ts";
import { adsConfigSource, clusterName, mergedPorts, message, subsetClusterName } from "./shared.ts";

/**
 * Per merged service port, ascending: the Cluster `outbound|<port>||<host>`, then one
 * `outbound|<port>|<subset>|<host>` per subset of the view's DestinationRule, in the rule's order
 * (grpcgen applyDestinationRule). Each is type EDS, endpoints over ADS (v3) under the cluster's
 * own name, ROUND_ROBIN (grpc-js-xds maps it to xds_wrr_locality over round_robin); the rule's
 * effective policy for the port and subset (effectivePolicy) adds ring hash, circuit breakers and
 * outlier detection (see cluster-policy.ts). Without a rule: exactly the default clusters.
 */
export const clusterGenerator: Generator = {
  typeUrl: TypeUrl.cluster,
  generate(view) {
    const dr = view.destinationRule;
    const out: Generated<typeof ClusterSchema>[] = [];
    for (const p of mergedPorts(view)) {
      const name = clusterName(view.hostname, p.port);
      out.push({
        name,
        schema: ClusterSchema,
        message: edsCluster(name, policyFields(effectivePolicy(dr, p.port))),
      });
      for (const subset of dr?.subsets ?? []) {
        const sub = subsetClusterName(view.hostname, p.port, subset.name);
        const fields = policyFields(effectivePolicy(dr, p.port, subset.name));
        out.push({ name: sub, schema: ClusterSchema, message: edsCluster(sub, fields) });
      }
    }
    return out;
  },
};

function edsCluster(name: string, policy: Partial<Cluster>): Cluster {
  return message(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: message(Cluster_EdsClusterConfigSchema, {
      edsConfig: adsConfigSource(),
      serviceName: name,
    }),
    lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
    ...policy,
  });
}
