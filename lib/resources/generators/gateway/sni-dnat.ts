/**
 * AUTO_PASSTHROUGH (SNI DNAT), as istiod builds it for a gateway (pilot/pkg/networking/core
 * cluster.go buildOutboundSniDnatClusters, gateway.go builtAutoPassthroughFilterChains): for every
 * service the gateway sees that is not mesh-external, every non-UDP port and every subset of its
 * DestinationRule, a cluster `outbound_.<port>_.<subset>_.<host>` (the outbound cluster under that
 * name, without TLS: the client's mTLS passes through), and, for the services an AUTO_PASSTHROUGH
 * server's hosts cover, a filter chain matching that name as SNI with Istio's mTLS ALPNs, a
 * tcp_proxy to it. The clusters read the shared assignments (`outbound|<port>|<subset>|<host>`).
 * Pure.
 */
import { type Cluster, ClusterSchema } from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { hostSubsetOf } from "../../../registry/istio/visibility.ts";
import type { Generated, ServiceView } from "../../types.ts";
import { mergedPorts, message } from "../shared.ts";
import type { BuildContext } from "../sidecar/cluster-build.ts";
import { altStatName } from "../sidecar/cluster-common.ts";
import { outboundClusters } from "../sidecar/cluster-outbound.ts";

/** allIstioMtlsALPNs: what an Istio mTLS client offers. */
export const ALL_ISTIO_MTLS_ALPNS: readonly string[] = Object.freeze([
  "istio",
  "istio-peer-exchange",
  "istio-http/1.0",
  "istio-http/1.1",
  "istio-h2",
]);

/** BuildDNSSrvSubsetKey: `outbound_.<port>_.<subset>_.<host>`. */
export function sniDnatName(port: number, subset: string, host: string): string {
  return `outbound_.${port}_.${subset}_.${host}`;
}

const meshExternal = (v: ServiceView) => v.services.some((s) => s.meshExternal === true);

/** One SNI DNAT target: its cluster name (also the SNI it is matched by). */
export interface SniDnatTarget {
  name: string;
}

/** The SNI DNAT clusters of `services` (see the module comment), in service, port, subset order. */
export function sniDnatClusters(
  services: readonly ServiceView[],
  ctx: BuildContext,
): Generated<typeof ClusterSchema>[] {
  const out: Generated<typeof ClusterSchema>[] = [];
  for (const view of services) {
    if (meshExternal(view)) continue;
    for (const c of outboundClusters(view, ctx)) {
      const [, port, subset, host] = c.name.split("|");
      const name = sniDnatName(Number(port), subset ?? "", host ?? "");
      out.push({ name, schema: ClusterSchema, message: withoutTls(c.message, name) });
    }
  }
  return out;
}

function withoutTls(c: Cluster, name: string): Cluster {
  return message(ClusterSchema, {
    ...c,
    name,
    altStatName: altStatName(name),
    transportSocketMatches: [],
    transportSocket: undefined,
  });
}

/**
 * The SNI names an AUTO_PASSTHROUGH server with `sniHosts` takes: per covered service (not
 * mesh-external), per non-UDP port, its default then each subset's, in service order.
 */
export function sniDnatTargets(
  services: readonly ServiceView[],
  sniHosts: readonly string[],
): SniDnatTarget[] {
  const out: SniDnatTarget[] = [];
  for (const view of services) {
    if (meshExternal(view) || !sniHosts.some((h) => hostSubsetOf(view.hostname, h))) continue;
    const subsets = view.destinationRule?.subsets.map((s) => s.name) ?? [];
    for (const p of mergedPorts(view)) {
      if (p.protocol === "UDP") continue;
      out.push({ name: sniDnatName(p.port, "", view.hostname) });
      for (const s of subsets) out.push({ name: sniDnatName(p.port, s, view.hostname) });
    }
  }
  return out;
}
