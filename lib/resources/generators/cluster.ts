/**
 * CDS for proxyless gRPC: one EDS cluster per service port and DestinationRule subset, as Istio's
 * grpcgen; LOGICAL_DNS for a host a DNS ServiceEntry serves.
 */
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_EdsClusterConfigSchema,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Endpoint, ServicePort } from "../../model/index.ts";
import { effectivePolicy } from "../../registry/istio/destination-rule.ts";
import { resolvesByDns } from "../../registry/istio/external-services.ts";
import type { EffectivePolicy } from "../../registry/istio/traffic-policy.ts";
import type { Generated, Generator, ServiceView } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";
import { policyFields } from "./cluster-policy.ts";
import { clientTransportSocket } from "./cluster-tls.ts";
import { endpointsByPort, hasLabels, loadAssignment } from "./endpoint.ts";
import { adsConfigSource, clusterName, mergedPorts, message, subsetClusterName } from "./shared.ts";

/**
 * Per merged service port, ascending: the Cluster `outbound|<port>||<host>`, then one
 * `outbound|<port>|<subset>|<host>` per subset of the view's DestinationRule, in the rule's order
 * (grpcgen applyDestinationRule). Each is type EDS, endpoints over ADS (v3) under the cluster's
 * own name, ROUND_ROBIN (grpc-js-xds maps it to xds_wrr_locality over round_robin); the rule's
 * effective policy for the port and subset (effectivePolicy) adds ring hash, circuit breakers and
 * outlier detection (see cluster-policy.ts), its ISTIO_MUTUAL `tls` (or auto-mTLS toward workloads
 * that all serve mTLS) a transport socket (cluster-tls.ts). Without a rule: exactly the default clusters.
 *
 * A host served by a DNS or DNS_ROUND_ROBIN ServiceEntry (resolvesByDns) gets LOGICAL_DNS clusters
 * instead, their one endpoint inline (load_assignment), which the gRPC client resolves itself
 * (gRFC A37: grpc-js-xds takes exactly one locality with one socket-address endpoint, and has no
 * STRICT_DNS): the first of the port's endpoints (for a subset, of those carrying its labels), as
 * Envoy's LOGICAL_DNS uses only the first. A DNS port or subset with no endpoint keeps the EDS
 * cluster (its assignment is empty: calls fail UNAVAILABLE), as a LOGICAL_DNS cluster without one
 * would be NACKed.
 */
export const clusterGenerator: Generator = {
  typeUrl: TypeUrl.cluster,
  generate(view, ctx) {
    const dr = view.destinationRule;
    const auto = ctx.enableAutoMtls !== false;
    const out: Generated<typeof ClusterSchema>[] = [];
    const ports = mergedPorts(view);
    const dns = resolvesByDns(view.services) ? endpointsByPort(view, ports) : undefined;
    for (const [i, p] of ports.entries()) {
      const onPort = dns?.[i];
      const name = clusterName(view.hostname, p.port);
      out.push({
        name,
        schema: ClusterSchema,
        message: cluster(name, clusterFields(view, p, effectivePolicy(dr, p.port), auto), onPort?.[0]),
      });
      for (const subset of dr?.subsets ?? []) {
        const sub = subsetClusterName(view.hostname, p.port, subset.name);
        const fields = clusterFields(view, p, effectivePolicy(dr, p.port, subset.name), auto);
        const first = onPort?.find((e) => hasLabels(e.labels, subset.labels));
        out.push({ name: sub, schema: ClusterSchema, message: cluster(sub, fields, first) });
      }
    }
    return out;
  },
};

/** The fields a policy sets, and the transport socket its `tls` (or auto-mTLS) gives (cluster-tls.ts). */
function clusterFields(
  view: ServiceView,
  port: ServicePort,
  policy: EffectivePolicy | undefined,
  autoMtlsOn: boolean,
): Partial<Cluster> {
  const fields = policyFields(policy);
  const transportSocket = clientTransportSocket(view, port, policy?.tls, autoMtlsOn);
  return transportSocket ? { ...fields, transportSocket } : fields;
}

/** A LOGICAL_DNS cluster when given the endpoint to resolve, else an EDS cluster. */
function cluster(name: string, policy: Partial<Cluster>, dnsEndpoint: Endpoint | undefined): Cluster {
  return dnsEndpoint ? logicalDnsCluster(name, dnsEndpoint, policy) : edsCluster(name, policy);
}

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

function logicalDnsCluster(name: string, endpoint: Endpoint, policy: Partial<Cluster>): Cluster {
  return message(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
    loadAssignment: loadAssignment(name, [endpoint]),
    lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
    ...policy,
  });
}
