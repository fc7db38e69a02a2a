/**
 * /debug/networkz: the networks as the last push resolved them (keys.networkTable()): MeshNetworks'
 * networks with their ranges and registries, each cluster's network and where it came from, and
 * every gateway with its address, port, locality and source; beside it where the stored
 * MeshNetworks came from (a newer one than the table's shows here before its push is flushed).
 */
import type { StoredMeshNetworks } from "../registry/mesh/mesh-networks.ts";
import {
  type ClusterNetwork,
  emptyNetworkTable,
  type NetworkTable,
  type ResolvedGateway,
  type TableNetwork,
} from "../resources/network-table.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

/** What GET /debug/networkz answers. */
export interface Networkz {
  /** StoredMeshNetworks.source, "" when no MeshNetworks is stored. */
  meshNetworksSource: string;
  networks: TableNetwork[];
  clusters: ClusterNetwork[];
  gateways: ResolvedGateway[];
}

/** The stored network table and MeshNetworks' source, two reads; empty lists for a mesh without networks. */
export async function readNetworkz(store: Store): Promise<Networkz> {
  const [table, mesh] = await Promise.all([
    store.get<NetworkTable>(keys.networkTable()),
    store.get<StoredMeshNetworks>(keys.meshNetworks()),
  ]);
  const t = table?.value ?? emptyNetworkTable;
  return {
    meshNetworksSource: mesh?.value.source ?? "",
    networks: t.networks ?? [],
    clusters: t.clusters ?? [],
    gateways: t.gateways,
  };
}
