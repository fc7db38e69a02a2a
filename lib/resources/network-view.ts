/**
 * A proxy's network view (istiod pilot/pkg/model/context.go Proxy.InNetwork and GetView,
 * proxy_view.go, pkg/model/proxy.go StringList and DiscoverIPMode): the network it is in (node
 * metadata NETWORK), the networks it asks to see (REQUESTED_NETWORK_VIEW) and the one IP family it
 * can reach gateways over. Every proxy with the same three shares one view, and so one assignment
 * per ClusterLoadAssignment (network-assignment.ts). Pure.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { parseIp } from "../model/ip.ts";

/** The IP family of a proxy's addresses: one family, or "" when it has both or none (no filtering). */
export type ProxyIpFamily = "IPv4" | "IPv6" | "";

/** What a proxy sees of the mesh's networks. */
export interface NetworkView {
  /** Node metadata NETWORK; "" when unset. */
  readonly network: string;
  /**
   * REQUESTED_NETWORK_VIEW, unique and sorted; undefined when unset or empty (every network is
   * visible). Endpoints without a network are always visible.
   */
  readonly requested: readonly string[] | undefined;
  /** The family of the proxy's IPs: gateways of the other family are unreachable for it. */
  readonly family: ProxyIpFamily;
}

/**
 * REQUESTED_NETWORK_VIEW as istiod reads it: a comma-separated string (as ISTIO_META_ sets it;
 * split without trimming, as Go's strings.Split) or a list of strings; "" or [] asks for none.
 */
export function requestedNetworks(value: unknown): readonly string[] | undefined {
  const parts =
    typeof value === "string"
      ? value === ""
        ? []
        : value.split(",")
      : Array.isArray(value)
        ? value.filter((v): v is string => typeof v === "string")
        : [];
  if (parts.length === 0) return undefined;
  return [...new Set(parts)].sort();
}

/**
 * The one family of `ips` (istiod's DiscoverIPMode, SupportsIPv4/IPv6); "" for both families or
 * no parseable address: such a proxy can reach every gateway.
 */
export function ipFamilyOf(ips: readonly string[]): ProxyIpFamily {
  let v4 = false;
  let v6 = false;
  for (const ip of ips) {
    const p = parseIp(ip);
    if (!p.ok) continue;
    if (p.family === "IPv4") v4 = true;
    else v6 = true;
  }
  return v4 === v6 ? "" : v4 ? "IPv4" : "IPv6";
}

/** A node's view from its metadata (NETWORK, REQUESTED_NETWORK_VIEW) and its IPs. */
export function networkViewOf(metadata: JsonObject | undefined, ips: readonly string[]): NetworkView {
  const network = metadata?.NETWORK;
  return {
    network: typeof network === "string" ? network : "",
    requested: requestedNetworks(metadata?.REQUESTED_NETWORK_VIEW),
    family: ipFamilyOf(ips),
  };
}

/** The key every proxy of one view shares: equal views, equal keys. */
export function networkViewKey(view: NetworkView): string {
  return JSON.stringify([view.network, view.requested ?? null, view.family]);
}

/** Whether an endpoint on `network` is visible in `view` (istiod's ProxyView.IsVisible). */
export function visibleIn(view: NetworkView, network: string): boolean {
  return network === "" || view.requested === undefined || view.requested.includes(network);
}

/** Whether the proxy is on `network`, or either side has none (istiod's Proxy.InNetwork). */
export function inNetwork(view: NetworkView, network: string): boolean {
  return network === "" || view.network === "" || view.network === network;
}
