/**
 * The gateways of the network table (istiod's NetworkManager.reload and the kube controller's
 * extractGatewaysFromService): MeshNetworks `address` gateways as given; a Service of a cluster
 * is a gateway of network N when it is labelled `topology.istio.io/network: N` (port from
 * `networking.istio.io/gatewayPort`, default 15443, and only when the Service has that port), else
 * when N lists the cluster in `fromRegistry` and a gateway of N names the Service in
 * `registryServiceName` (that gateway's port). Either way one gateway per external address (load
 * balancer ingress, externalIPs) of the Service in that cluster; none without one.
 */
import type { Service } from "../model/index.ts";
import { isExternalService } from "../registry/istio/external-services.ts";
import { NETWORK_LABEL } from "../registry/kube/endpoint-builder.ts";
import type { MeshNetworksModel } from "../registry/mesh/mesh-networks.ts";
import type { ResolvedGateway } from "./network-table.ts";

/** Service label naming the port a network-labelled gateway Service takes cross-network mTLS on (label.NetworkingGatewayPort). */
export const GATEWAY_PORT_LABEL = "networking.istio.io/gatewayPort";

/** The gateway port of a network-labelled Service without GATEWAY_PORT_LABEL (istiod DefaultNetworkGatewayPort). */
export const DEFAULT_GATEWAY_PORT = 15443;

/** The gateways MeshNetworks gives by `address`: cluster "", as istiod's. */
export function addressGateways(model: MeshNetworksModel): ResolvedGateway[] {
  const out: ResolvedGateway[] = [];
  for (const [network, n] of Object.entries(model.networks))
    for (const gw of n.gateways)
      if (gw.address)
        out.push({
          network,
          cluster: "",
          address: gw.address,
          port: gw.port,
          locality: gw.locality ?? "",
          source: "address",
        });
  return sortGateways(out);
}

/** The hostnames MeshNetworks names in `registryServiceName` (their Services' changes may change gateways). */
export function registryServiceNames(model: MeshNetworksModel): Set<string> {
  const out = new Set<string>();
  for (const n of Object.values(model.networks))
    for (const gw of n.gateways) if (gw.registryServiceName) out.add(gw.registryServiceName);
  return out;
}

/**
 * The gateways one service's records (one per cluster) give: by its network label, else by a
 * MeshNetworks `registryServiceName` of a network whose `fromRegistry` lists the record's cluster.
 * ServiceEntry records are no gateway (istiod reads Kubernetes Services only).
 */
export function serviceGateways(records: readonly Service[], model: MeshNetworksModel): ResolvedGateway[] {
  const out: ResolvedGateway[] = [];
  for (const s of records) {
    if (isExternalService(s) || !s.externalAddresses?.length) continue;
    for (const g of gatewaysOf(s, model))
      for (const address of s.externalAddresses)
        out.push({ ...g, cluster: s.clusterId, address, source: `${g.source}@${s.clusterId}` });
  }
  return sortGateways(out);
}

type Partial = Pick<ResolvedGateway, "network" | "port" | "locality" | "source">;

function gatewaysOf(s: Service, model: MeshNetworksModel): Partial[] {
  const labelled = s.labels[NETWORK_LABEL];
  if (labelled) {
    const port = labelPort(s.labels[GATEWAY_PORT_LABEL]);
    // A labelled Service that does not take the port is no gateway (istiod warns and skips it).
    if (!s.ports.some((p) => p.port === port)) return [];
    return [{ network: labelled, port, locality: "", source: `label:${s.hostname}` }];
  }
  const out: Partial[] = [];
  for (const [network, n] of Object.entries(model.networks)) {
    if (!n.endpoints.some((e) => "fromRegistry" in e && e.fromRegistry === s.clusterId)) continue;
    for (const gw of n.gateways)
      if (gw.registryServiceName === s.hostname)
        out.push({
          network,
          port: gw.port,
          locality: gw.locality ?? "",
          source: `registryServiceName:${s.hostname}`,
        });
  }
  return out;
}

/** The label's port; the default when absent or not a number (istiod logs and defaults). */
function labelPort(value: string | undefined): number {
  if (value === undefined || !/^[0-9]{1,5}$/.test(value)) return DEFAULT_GATEWAY_PORT;
  return Number(value);
}

/** Sorted by (network, cluster, address, port, source), duplicates (all fields equal) once. */
export function sortGateways(gateways: readonly ResolvedGateway[]): ResolvedGateway[] {
  const sorted = [...gateways].sort(
    (a, b) =>
      cmp(a.network, b.network) ||
      cmp(a.cluster, b.cluster) ||
      cmp(a.address, b.address) ||
      a.port - b.port ||
      cmp(a.source, b.source) ||
      cmp(a.locality, b.locality),
  );
  return sorted.filter((g, i) => i === 0 || !sameGateway(g, sorted[i - 1] as ResolvedGateway));
}

function sameGateway(a: ResolvedGateway, b: ResolvedGateway): boolean {
  return (
    a.network === b.network &&
    a.cluster === b.cluster &&
    a.address === b.address &&
    a.port === b.port &&
    a.source === b.source &&
    a.locality === b.locality
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The service hostname a gateway came from (`label:` and `registryServiceName:` sources), else undefined. */
export function gatewayService(g: ResolvedGateway): string | undefined {
  const colon = g.source.indexOf(":");
  const at = g.source.lastIndexOf("@");
  return colon < 0 || at < colon ? undefined : g.source.slice(colon + 1, at);
}
