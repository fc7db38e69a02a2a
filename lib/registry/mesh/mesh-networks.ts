/**
 * MeshNetworks (istio.io/api mesh/v1alpha1 network.proto), validated: which networks the mesh has,
 * which endpoints belong to each (a CIDR range or a registry, i.e. a cluster id) and the gateways
 * that reach it from other networks. Read from the `meshNetworks` key of the `istio` ConfigMap or
 * MESH_NETWORKS_FILE, stored under keys.meshNetworks().
 */

/** One `endpoints` entry of a network: exactly one of the two. */
export type NetworkEndpoints = { fromCidr: string } | { fromRegistry: string };

/** One gateway of a network: `registryServiceName` (a Service's FQDN) or `address`, always a port. */
export interface MeshNetworkGateway {
  /** `<name>.<ns>.svc.<suffix>`: resolved to that Service's load balancer ingress in each cluster. */
  registryServiceName?: string;
  /** An IP address (or hostname) reachable from other networks. */
  address?: string;
  /** The gateway's port (istiod: required, 1-65535). */
  port: number;
  /** `region/zone/subzone`; "" when unset. */
  locality?: string;
}

/** One network, by name. */
export interface MeshNetwork {
  endpoints: NetworkEndpoints[];
  gateways: MeshNetworkGateway[];
}

/** The validated MeshNetworks: network name ─▶ network (empty when the mesh has one network). */
export interface MeshNetworksModel {
  networks: Record<string, MeshNetwork>;
}

/** The record stored under keys.meshNetworks(): the last valid MeshNetworks and where it came from. */
export interface StoredMeshNetworks {
  model: MeshNetworksModel;
  /** `configmap:<cluster>/<ns>/<name>@<resourceVersion>` or `file:<path>`. */
  source: string;
}
