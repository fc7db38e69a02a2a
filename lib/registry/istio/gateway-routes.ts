/**
 * The VirtualServices bound to gateways, as istiod's PushContext.VirtualServicesForGateway and the
 * gateway listener and route builders read them (pilot/pkg/networking/core/gateway.go
 * buildGatewayHTTPRouteConfig, pickMatchingGatewayHosts, l4SingleMatch): `gateways` resolved to
 * `<ns>/<name>` (a short name is in the VirtualService's namespace), exportTo judged for the
 * proxy's namespace, hosts intersected with a server's (the server host's namespace prefix limits
 * which namespaces' VirtualServices apply), the HTTP routes read for one gateway, and the `tls` and
 * `tcp` routes (the HTTP model, virtual-service.ts, has none). Pure.
 */
import type { ConfigMeta } from "./config-meta.ts";
import { splitHost } from "./gateway.ts";
import type { RouteDestination, VirtualServiceModel } from "./virtual-service.ts";
import { toVirtualService } from "./virtual-service.ts";
import { exportedTo, hostMatches, hostSubsetOf, resolveHost } from "./visibility.ts";

/** An L4 match of a `tls` or `tcp` route (TLSMatchAttributes / L4MatchAttributes, the parts read). */
export interface L4Match {
  sniHosts: string[];
  /** Absent (0): any port. */
  port?: number;
  /** Resolved to `<ns>/<name>`; empty: any gateway the VirtualService binds. */
  gateways: string[];
}

/** A `tls` or `tcp` route: its matches and weighted destinations (resolved as the HTTP ones). */
export interface L4Route {
  matches: L4Match[];
  destinations: RouteDestination[];
}

/** A VirtualService as gateways read it. */
export interface GatewayVirtualService extends ConfigMeta {
  /** Resolved hosts (short names against its namespace). */
  hosts: string[];
  /** Resolved gateway names (`<ns>/<name>`, or `mesh`). */
  gateways: string[];
  exportTo: string[];
  tls: L4Route[];
  tcp: L4Route[];
  /** The HTTP routes read for `gateway` (`<ns>/<name>`): matches naming other gateways left out. */
  httpFor(gateway: string): VirtualServiceModel;
}

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const list = (v: unknown): Raw[] => (Array.isArray(v) ? (v as Raw[]) : []);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];

/** resolveGatewayName: `mesh` as is, `<ns>/<name>` as is, `<name>` in `namespace`. */
export function resolveGatewayName(g: string, namespace: string): string {
  return g === "mesh" || g.includes("/") ? g : `${namespace}/${g}`;
}

/** Reads a VirtualService for gateways; `exportTo` is the one it is read with (the mesh default when it wrote none). */
export function toGatewayVirtualService(
  meta: ConfigMeta,
  spec: unknown,
  domainSuffix: string,
  exportTo: readonly string[],
): GatewayVirtualService {
  const s = obj(spec);
  const resolve = (h: string) => resolveHost(h, meta.namespace, domainSuffix);
  const gateways = strings(s.gateways).map((g) => resolveGatewayName(g, meta.namespace));
  const l4 = (r: Raw): L4Route => ({
    matches: list(r.match).map((m) => ({
      sniHosts: strings(m.sniHosts),
      ...(typeof m.port === "number" && m.port !== 0 && { port: m.port }),
      gateways: strings(m.gateways).map((g) => resolveGatewayName(g, meta.namespace)),
    })),
    destinations: destinations(list(r.route), resolve),
  });
  const http = new Map<string, VirtualServiceModel>();
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(meta.creationTimestamp !== undefined && { creationTimestamp: meta.creationTimestamp }),
    hosts: strings(s.hosts).map(resolve),
    gateways,
    exportTo: [...exportTo],
    tls: list(s.tls).map(l4),
    tcp: list(s.tcp).map(l4),
    httpFor(gateway) {
      let m = http.get(gateway);
      if (!m) {
        m = toVirtualService(meta, spec, domainSuffix, gateway);
        http.set(gateway, m);
      }
      return m;
    },
  };
}

/** As the HTTP routes weigh them: a lone destination gets 100, zero weights are dropped. */
function destinations(raw: readonly Raw[], resolve: (h: string) => string): RouteDestination[] {
  const out = raw.map((d): RouteDestination => {
    const dest = obj(d.destination);
    const port = obj(dest.port).number;
    return {
      host: resolve(typeof dest.host === "string" ? dest.host : ""),
      weight: typeof d.weight === "number" ? d.weight : 0,
      ...(typeof dest.subset === "string" && dest.subset !== "" && { subset: dest.subset }),
      ...(typeof port === "number" && port !== 0 && { port }),
    };
  });
  if (out.length === 1) return [{ ...(out[0] as RouteDestination), weight: 100 }];
  return out.filter((d) => d.weight > 0);
}

/**
 * VirtualServicesForGateway: those naming `gateway` and exported to `proxyNamespace`, in istiod's
 * config order (the input's: oldest first).
 */
export function virtualServicesForGateway(
  all: readonly GatewayVirtualService[],
  proxyNamespace: string,
  gateway: string,
): GatewayVirtualService[] {
  return all.filter(
    (vs) => vs.gateways.includes(gateway) && exportedTo(vs.exportTo, vs.namespace, proxyNamespace),
  );
}

/**
 * host.NamesForNamespace then Intersection: the server's hosts that apply to a VirtualService of
 * `namespace` (no prefix, `*`, or that namespace) against the VirtualService's hosts: for each
 * pair where one is a subset of the other, that one, unique, in server-host order.
 */
export function intersectHosts(
  serverHosts: readonly string[],
  namespace: string,
  vsHosts: readonly string[],
): string[] {
  const out: string[] = [];
  for (const sh of serverHosts) {
    const { namespace: ns, host } = splitHost(sh);
    if (ns !== undefined && ns !== "*" && ns !== namespace) continue;
    for (const vh of vsHosts) {
      const pick = hostSubsetOf(host, vh) ? host : hostSubsetOf(vh, host) ? vh : undefined;
      if (pick !== undefined && !out.includes(pick)) out.push(pick);
    }
  }
  return out;
}

/**
 * pickMatchingGatewayHosts: whether some VirtualService host matches one of the server's hosts
 * (a `<ns>/` prefix must name the VirtualService's namespace).
 */
export function matchesServerHosts(serverHosts: readonly string[], vs: GatewayVirtualService): boolean {
  for (const sh of serverHosts) {
    const { namespace: ns, host } = splitHost(sh);
    if (ns !== undefined && ns !== vs.namespace) continue;
    if (vs.hosts.some((vh) => hostMatches(host, vh))) return true;
  }
  return false;
}

/** l4SingleMatch: the match's port (if any) is the server's, its gateways (if any) name `gateway`. */
export function l4Matches(m: L4Match, serverPort: number, gateway: string): boolean {
  return (
    (m.port === undefined || m.port === serverPort) &&
    (m.gateways.length === 0 || m.gateways.includes(gateway))
  );
}
