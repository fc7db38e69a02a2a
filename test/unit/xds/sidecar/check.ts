/**
 * What every sidecar LDS/RDS test checks of its output: each Listener and RouteConfiguration passes
 * Envoy's PGV rules (test/support/xds-check.ts), and the whole set is consistent
 * (test/support/xds-refs.ts) with the Clusters the cluster side (sidecarClusters) makes for the same
 * inputs and the ClusterLoadAssignments the endpoint generator makes for the same views: every RDS
 * name an HCM names is served, every cluster a route, mirror or tcp_proxy names exists, every EDS
 * cluster has its assignment.
 */
import { type DescMessage, toBinary } from "@bufbuild/protobuf";
import { endpointGenerator } from "../../../../lib/resources/generators/endpoint.ts";
import { sidecarClusters } from "../../../../lib/resources/generators/sidecar/cluster.ts";
import { sidecarListeners } from "../../../../lib/resources/generators/sidecar/listener.ts";
import { sidecarRouteConfigurations } from "../../../../lib/resources/generators/sidecar/route.ts";
import type { SidecarInputs } from "../../../../lib/resources/generators/sidecar/types.ts";
import type { Generated } from "../../../../lib/resources/types.ts";
import { assertEnvoyValid } from "../../../support/xds-check.ts";
import { danglingReferences, type EncodedResource } from "../../../support/xds-refs.ts";

const typeUrl = (schema: DescMessage) => `type.googleapis.com/${schema.typeName}`;

/** A generated resource as a proxy receives it. */
export function encode(g: Generated): EncodedResource & { name: string } {
  return { typeUrl: typeUrl(g.schema), name: g.name, value: toBinary(g.schema, g.message) };
}

/** The Clusters and ClusterLoadAssignments the other generators make for `inputs`, encoded. */
export function clustersAndEndpoints(inputs: SidecarInputs): EncodedResource[] {
  const ctx = { domainSuffix: inputs.mesh.domainSuffix };
  return [
    ...sidecarClusters(inputs).map(encode),
    ...inputs.services.flatMap((v) => endpointGenerator.generate(v, ctx)).map(encode),
  ];
}

/**
 * Generates the sidecar's Listeners and RouteConfigurations, asserts they pass PGV, and returns
 * them with the dangling references of the whole set (the other side as clustersAndEndpoints
 * gives, unless `others` is passed).
 */
export function generateChecked(inputs: SidecarInputs, others = clustersAndEndpoints(inputs)) {
  const listeners = sidecarListeners(inputs);
  const routes = sidecarRouteConfigurations(inputs);
  const encoded = [...listeners, ...routes].map(encode);
  assertEnvoyValid(encoded, "sidecar LDS/RDS");
  return { listeners, routes, dangling: danglingReferences([...encoded, ...others]) };
}
