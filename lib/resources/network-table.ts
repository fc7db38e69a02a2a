/**
 * The networks of the mesh as the flush resolved them for one push (Istio's NetworkManager and
 * NetworkGateways): MeshNetworks' ranges and registries, each cluster's network, and every gateway
 * with its address resolved (a `registryServiceName` to that Service's load balancer ingress in
 * each cluster). Stored under keys.networkTable() when it changed; a push that changed it carries
 * the change NETWORKS_CHANGED, so streams with a network view derive their assignments again.
 */

/** One gateway of a network, resolved. */
export interface ResolvedGateway {
  network: string;
  /** The cluster whose Service gave the address; "" for a MeshNetworks `address` gateway. */
  cluster: string;
  /** An IP address (a hostname ingress is kept too; proxyless clients need an IP). */
  address: string;
  port: number;
  /** `region/zone/subzone` from MeshNetworks, "" when unset. */
  locality: string;
  /** How it was found, for /debug/networkz: `address` or `registryServiceName:<fqdn>@<cluster>`. */
  source: string;
}

/** The resolved networks of one push; a mesh without MeshNetworks has empty fields. */
export interface NetworkTable {
  /** Gateways sorted by (network, cluster, address, port). */
  gateways: ResolvedGateway[];
}

/** The resource change a push carries when the network table changed (ResourceChange.view). */
export const NETWORKS_CHANGED = "~networks";
