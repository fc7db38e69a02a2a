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

/** One MeshNetworks network as the table keeps it: its ranges and registries, in MeshNetworks order. */
export interface TableNetwork {
  name: string;
  /** `fromCidr` entries that parse (a range that does not is left out, as istiod skips it). */
  fromCidr: string[];
  /** `fromRegistry` entries: cluster ids. */
  fromRegistry: string[];
}

/**
 * How a cluster's endpoints without an explicit network got theirs: the `topology.istio.io/network`
 * label of the cluster's system namespace, or a MeshNetworks `fromRegistry` naming the cluster.
 */
export type ClusterNetworkSource = "systemNamespace" | "fromRegistry";

/** The network of every endpoint of one cluster that names none itself. */
export interface ClusterNetwork {
  cluster: string;
  network: string;
  source: ClusterNetworkSource;
}

/** The resolved networks of one push; a mesh without MeshNetworks has empty fields. */
export interface NetworkTable {
  /** Gateways sorted by (network, cluster, address, port). */
  gateways: ResolvedGateway[];
  /** MeshNetworks' networks in its order (the order CIDR ranges are tried in); absent = none. */
  networks?: TableNetwork[];
  /** Each cluster with a network of its own, sorted by cluster; absent = none. */
  clusters?: ClusterNetwork[];
}

/** The table of a mesh without networks: what a store without keys.networkTable() holds. */
export const emptyNetworkTable: NetworkTable = { gateways: [] };

/**
 * Whether the table gives endpoints a network at all (a MeshNetworks network or a cluster network).
 * Only then do assignments carry `istio` network metadata, so a mesh without networks publishes
 * exactly what it did before networks existed.
 */
export function hasNetworks(table: NetworkTable): boolean {
  return (table.networks?.length ?? 0) > 0 || (table.clusters?.length ?? 0) > 0;
}

/**
 * Whether two tables resolve endpoints alike (same networks, ranges, registries and cluster
 * networks): when they do not, every service's assignments are generated again; gateways alone
 * change no assignment.
 */
export function sameResolution(a: NetworkTable, b: NetworkTable): boolean {
  return (
    JSON.stringify([a.networks ?? [], a.clusters ?? []]) ===
    JSON.stringify([b.networks ?? [], b.clusters ?? []])
  );
}

/** The resource change a push carries when the network table changed (ResourceChange.view). */
export const NETWORKS_CHANGED = "~networks";
