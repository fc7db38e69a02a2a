/**
 * The gateways of a push's network table as split-horizon EDS uses them (istiod
 * pilot/pkg/model/network.go NetworkGateways): only gateways with an IP address (an assignment
 * holds IPs; a hostname gateway is for DNS clusters, which EDS never serves), indexed by network
 * and by (network, cluster), and the load balancing scale factor: the least common multiple of the
 * gateway counts of every network and every (network, cluster), so an endpoint's weight splits
 * evenly among the gateways in front of it. Pure.
 */
import { parseIp } from "../model/ip.ts";
import type { NetworkTable, ResolvedGateway } from "./network-table.ts";

/** The gateways of one table, indexed. */
export interface GatewayIndex {
  /** Whether any network has a gateway (istiod's IsMultiNetworkEnabled): else assignments stay as they are. */
  readonly multiNetwork: boolean;
  /** The weight scale factor (1 when there is no gateway). */
  readonly scaleFactor: number;
  /**
   * The gateways in front of an endpoint of `network` in `cluster` (istiod's selectNetworkGateways):
   * those of that cluster when it has some, else (or with the cluster unknown) every gateway of the
   * network; sorted by address, port.
   */
  forEndpoint(network: string, cluster: string | undefined): readonly ResolvedGateway[];
}

const compareGateways = (a: ResolvedGateway, b: ResolvedGateway): number =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port;

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The index of `table` (an absent table: no gateway). */
export function indexGateways(table: NetworkTable | undefined): GatewayIndex {
  const byNetwork = new Map<string, ResolvedGateway[]>();
  const byCluster = new Map<string, ResolvedGateway[]>();
  const push = (m: Map<string, ResolvedGateway[]>, key: string, gw: ResolvedGateway) => {
    const list = m.get(key);
    if (list) list.push(gw);
    else m.set(key, [gw]);
  };
  const seen = new Set<string>();
  for (const gw of table?.gateways ?? []) {
    if (!parseIp(gw.address).ok || !(gw.port > 0)) continue;
    // istiod keeps a set: one gateway per (network, cluster, address, port).
    const id = JSON.stringify([gw.network, gw.cluster, gw.address, gw.port]);
    if (seen.has(id)) continue;
    seen.add(id);
    push(byNetwork, gw.network, gw);
    push(byCluster, JSON.stringify([gw.network, gw.cluster]), gw);
  }
  let scaleFactor = 1;
  for (const list of [...byNetwork.values(), ...byCluster.values()]) {
    list.sort(compareGateways);
    scaleFactor = (scaleFactor * list.length) / gcd(scaleFactor, list.length);
  }
  return {
    multiNetwork: byNetwork.size > 0,
    scaleFactor,
    forEndpoint(network, cluster) {
      const ofCluster = cluster === undefined ? undefined : byCluster.get(JSON.stringify([network, cluster]));
      return ofCluster ?? byNetwork.get(network) ?? [];
    },
  };
}
