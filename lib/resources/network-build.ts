/**
 * The resolution half of the network table (istiod's networkManager.reloadMeshNetworks and
 * setNetworkFromNamespace): MeshNetworks' networks with their ranges and registries, and each
 * cluster's network — its system namespace's `topology.istio.io/network` label, else the first
 * network whose `fromRegistry` names it. Pure.
 */
import { parseCidr } from "../model/ip.ts";
import { NETWORK_LABEL } from "../registry/kube/endpoint-builder.ts";
import type { MeshNetworksModel } from "../registry/mesh/mesh-networks.ts";
import type { ClusterNetwork, NetworkTable, ResolvedGateway, TableNetwork } from "./network-table.ts";

/** A cluster's system namespace (ISTIO_NAMESPACE) as ingest stored it. */
export interface SystemNamespace {
  cluster: string;
  labels: Readonly<Record<string, string>>;
}

/** The networks and cluster networks of `model` and the system namespaces, without gateways. */
export function networkResolution(
  model: MeshNetworksModel | undefined,
  systemNamespaces: readonly SystemNamespace[],
): Required<Omit<NetworkTable, "gateways">> {
  const networks: TableNetwork[] = Object.entries(model?.networks ?? {}).map(([name, n]) => ({
    name,
    // A range that does not parse is left out, as istiod skips it with a warning.
    fromCidr: n.endpoints.flatMap((e) => ("fromCidr" in e && parseCidr(e.fromCidr) ? [e.fromCidr] : [])),
    fromRegistry: n.endpoints.flatMap((e) => ("fromRegistry" in e ? [e.fromRegistry] : [])),
  }));
  const clusters = new Map<string, ClusterNetwork>();
  for (const ns of systemNamespaces) {
    const network = ns.labels[NETWORK_LABEL];
    if (network) clusters.set(ns.cluster, { cluster: ns.cluster, network, source: "systemNamespace" });
  }
  // The first network naming a cluster keeps it (istiod warns about the others).
  for (const n of networks)
    for (const cluster of n.fromRegistry)
      if (!clusters.has(cluster)) clusters.set(cluster, { cluster, network: n.name, source: "fromRegistry" });
  const sorted = [...clusters.values()].sort((a, b) =>
    a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0,
  );
  return { networks, clusters: sorted };
}

/** A table of `resolution` and `gateways`, empty fields left out (what a mesh without networks stores: nothing new). */
export function networkTable(
  resolution: Omit<NetworkTable, "gateways">,
  gateways: readonly ResolvedGateway[],
): NetworkTable {
  return {
    gateways: [...gateways],
    ...(resolution.networks?.length && { networks: resolution.networks }),
    ...(resolution.clusters?.length && { clusters: resolution.clusters }),
  };
}
