/**
 * What every sidecar LDS/RDS test checks of its output: each Listener and RouteConfiguration passes
 * Envoy's PGV rules (test/support/xds-check.ts), and the set is consistent (test/support/xds-refs.ts)
 * with the clusters the cluster side makes for the same inputs: `outbound|<port>||<host>` per
 * service port, `outbound|<port>|<subset>|<host>` per DestinationRule subset, `inbound|<port>||` per
 * inbound target port, BlackHoleCluster, PassthroughCluster, InboundPassthroughCluster.
 */
import { create, type DescMessage, toBinary } from "@bufbuild/protobuf";
import {
  Cluster_DiscoveryType,
  ClusterSchema,
} from "../../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { clusterName, mergedPorts, subsetClusterName } from "../../../../lib/xds/generators/shared.ts";
import { sidecarListeners } from "../../../../lib/xds/generators/sidecar/listener.ts";
import {
  BLACKHOLE_CLUSTER,
  INBOUND_PASSTHROUGH_CLUSTER,
  inboundClusterName,
  PASSTHROUGH_CLUSTER,
} from "../../../../lib/xds/generators/sidecar/outbound-ports.ts";
import { sidecarRouteConfigurations } from "../../../../lib/xds/generators/sidecar/route.ts";
import type { SidecarInputs } from "../../../../lib/xds/generators/sidecar/types.ts";
import type { Generated } from "../../../../lib/xds/types.ts";
import { assertEnvoyValid } from "../../../support/xds-check.ts";
import { danglingReferences, type EncodedResource } from "../../../support/xds-refs.ts";

const typeUrl = (schema: DescMessage) => `type.googleapis.com/${schema.typeName}`;

/** A generated resource as a proxy receives it. */
export function encode(g: Generated): EncodedResource & { name: string } {
  return { typeUrl: typeUrl(g.schema), name: g.name, value: toBinary(g.schema, g.message) };
}

/** The cluster names the cluster side publishes for `inputs` (see the file comment). */
export function clusterNames(inputs: SidecarInputs): string[] {
  const out = [BLACKHOLE_CLUSTER, PASSTHROUGH_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER];
  for (const v of inputs.services)
    for (const { port } of mergedPorts(v)) {
      out.push(clusterName(v.hostname, port));
      for (const s of v.destinationRule?.subsets ?? []) out.push(subsetClusterName(v.hostname, port, s.name));
    }
  for (const i of inputs.instances) out.push(inboundClusterName(i.targetPort));
  return out;
}

/** Static Clusters with those names: enough for the reference check, which follows names. */
export function clusterStubs(names: readonly string[]): EncodedResource[] {
  return names.map((name) =>
    encode({
      name,
      schema: ClusterSchema,
      message: create(ClusterSchema, {
        name,
        clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.STATIC },
      }),
    }),
  );
}

/**
 * Generates the sidecar's Listeners and RouteConfigurations, asserts they pass PGV, and returns
 * them with the dangling references of the whole set (clusters as `clusterNames` gives, unless
 * `clusters` is passed).
 */
export function generateChecked(inputs: SidecarInputs, clusters = clusterNames(inputs)) {
  const listeners = sidecarListeners(inputs);
  const routes = sidecarRouteConfigurations(inputs);
  const encoded = [...listeners, ...routes].map(encode);
  assertEnvoyValid(encoded, "sidecar LDS/RDS");
  return { listeners, routes, dangling: danglingReferences([...encoded, ...clusterStubs(clusters)]) };
}
