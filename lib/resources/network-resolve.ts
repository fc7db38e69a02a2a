/**
 * An endpoint's network at generation time (istiod's kube Controller.Network and the
 * ServiceEntry registry's network callback): the network ingest gave it (pod or namespace label,
 * WorkloadEntry or ServiceEntry endpoint `network`), else its cluster's network, else the first
 * MeshNetworks `fromCidr` range its address lies in, else none. The cluster and range fallbacks
 * come from the push's network table, so a MeshNetworks change never rewrites stored shards.
 */
import type { Endpoint, Provider } from "../model/index.ts";
import { type CidrRange, cidrContains, parseCidr, parseIp } from "../model/ip.ts";
import { type ClusterNetworkSource, hasNetworks, type NetworkTable } from "./network-table.ts";

/**
 * How an endpoint's network was found: `label` (a Kubernetes endpoint's pod or namespace label),
 * `entry` (a WorkloadEntry or ServiceEntry endpoint), its cluster's (ClusterNetworkSource), a
 * `fromCidr` range, or `none` (the default network, "").
 */
export type EndpointNetworkSource = "label" | "entry" | ClusterNetworkSource | "fromCidr" | "none";

/** An endpoint's network and how it was found; `range` names the matching `fromCidr`. */
export interface EndpointNetwork {
  network: string;
  source: EndpointNetworkSource;
  range?: string;
}

/** Resolves endpoints' networks against one network table. */
export interface NetworkResolver {
  /** The network of `endpoint`, reported by the shard of `provider`/`cluster`. */
  resolve(endpoint: Endpoint, provider: Provider, cluster: string): EndpointNetwork;
  /**
   * The addresses resolved so far that lie in several ranges, each with the ranges as
   * `<network> <cidr>` in the order tried (the first won), for the flush's one warning line.
   */
  ambiguous(): ReadonlyMap<string, readonly string[]>;
}

interface Range {
  network: string;
  cidr: string;
  range: CidrRange;
}

const none: EndpointNetwork = { network: "", source: "none" };

/**
 * A resolver over `table`, or undefined when the table gives no endpoint a network (no
 * MeshNetworks network, no cluster network): then assignments carry no network at all, as before
 * networks existed. Range lookups are remembered per address for the resolver's life (one push).
 */
export function createNetworkResolver(table: NetworkTable): NetworkResolver | undefined {
  if (!hasNetworks(table)) return undefined;
  const clusters = new Map<string, EndpointNetwork>();
  for (const c of table.clusters ?? []) clusters.set(c.cluster, { network: c.network, source: c.source });
  const ranges: Range[] = [];
  for (const n of table.networks ?? [])
    for (const cidr of n.fromCidr) {
      const range = parseCidr(cidr);
      if (range) ranges.push({ network: n.name, cidr, range });
    }
  const byAddress = new Map<string, EndpointNetwork>();
  const ambiguous = new Map<string, string[]>();
  const fromRanges = (address: string): EndpointNetwork => {
    const known = byAddress.get(address);
    if (known) return known;
    const ip = parseIp(address);
    const matched = ip.ok ? ranges.filter((r) => cidrContains(r.range, ip.bytes)) : [];
    const first = matched[0];
    const found = first ? { network: first.network, source: "fromCidr" as const, range: first.cidr } : none;
    if (matched.length > 1)
      ambiguous.set(
        address,
        matched.map((r) => `${r.network} ${r.cidr}`),
      );
    byAddress.set(address, found);
    return found;
  };
  return {
    resolve(endpoint, provider, cluster) {
      if (endpoint.network)
        return { network: endpoint.network, source: provider === "Kubernetes" ? "label" : "entry" };
      const own = clusters.get(cluster);
      if (own) return own;
      return ranges.length === 0 ? none : fromRanges(endpoint.address);
    },
    ambiguous: () => ambiguous,
  };
}

/** How many ambiguous addresses the warning line names; the rest are counted. */
const namedInWarning = 5;

/**
 * The flush's one warning line for addresses in several ranges (istiod warns per endpoint and
 * takes the first match), or undefined when there are none.
 */
export function ambiguousRangesWarning(
  ambiguous: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  if (ambiguous.size === 0) return undefined;
  const named = [...ambiguous].slice(0, namedInWarning).map(([ip, ranges]) => `${ip} (${ranges.join(", ")})`);
  const more = ambiguous.size > namedInWarning ? ` and ${ambiguous.size - namedInWarning} more` : "";
  return `networks: ${ambiguous.size} endpoint address(es) lie in several MeshNetworks fromCidr ranges, the first listed wins: ${named.join("; ")}${more}`;
}
