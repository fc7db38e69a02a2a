/**
 * VirtualService as istiod's validation webhook checks it (ValidateVirtualService), with the CRD's
 * bounds, first problem only, with the field path from the object: hosts (for the mesh or for
 * gateways, SNI-style hosts of a gateway's TLS routes, IP addresses), gateways, delegates, HTTP
 * routes (validate-http-route.ts), TLS and TCP routes, exportTo. Warnings: warnings.ts.
 */
import { type Check, child, isObject, quote, typeName } from "../check.ts";
import { istioMetadata, labelMap } from "./common.ts";
import { goIpFamily, ipSubnetProblem, wildcardDomainProblem } from "./istio-names.ts";
import { eachOf, gatewayNames, has, matchPort, nonEmpty, type P } from "./validate-fields.ts";
import { httpRoute, type RouteContext, routeDestinations } from "./validate-http-route.ts";
import { exportToCheck, hostMatches, hostSubsetOf } from "./visibility.ts";

/** Checks a VirtualService object's metadata annotations and `spec`. */
export const virtualServiceCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  if (!isObject(obj.spec))
    return { field: specPath, message: `must be an object, got ${typeName(obj.spec)}` };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  return (
    istioMetadata(obj, path) ??
    spec(obj.spec, specPath, typeof meta.namespace === "string" ? meta.namespace : "")
  );
};

const stringList = (s: Record<string, unknown>, k: string, path: string): P =>
  has(s, k)
    ? eachOf(s[k], child(path, k), (v, at) =>
        typeof v === "string" ? undefined : { field: at, message: `must be a string, got ${typeName(v)}` },
      )
    : undefined;

function spec(s: Record<string, unknown>, path: string, namespace: string): P {
  const p = stringList(s, "hosts", path) ?? stringList(s, "gateways", path);
  if (p) return p;
  const hosts = (s.hosts as string[] | undefined) ?? [];
  const gateways = (s.gateways as string[] | undefined) ?? [];
  if (hosts.length === 0) {
    const words = { gateways: "gateways specified", tls: "tls route specified", tcp: "tcp route specified" };
    for (const [k, w] of Object.entries(words))
      if (nonEmpty(s, k))
        return { field: child(path, k), message: `delegate virtual service must have no ${w}` };
  }
  const gatewayOnly = gateways.length > 0 && !gateways.includes("mesh");
  const ctx: RouteContext = { delegateVs: hosts.length === 0, gatewayOnly, gateways };
  const q =
    (gateways.length > 0 ? gatewayNames(gateways, child(path, "gateways")) : undefined) ??
    vsHosts(hosts, child(path, "hosts"), gatewayOnly, isSniHost(s));
  if (q) return q;
  if (!nonEmpty(s, "http") && !nonEmpty(s, "tcp") && !nonEmpty(s, "tls"))
    return { field: path, message: "http, tcp or tls must be provided in virtual service" };
  return (
    (has(s, "http") ? eachOf(s.http, child(path, "http"), (r, at) => httpRoute(r, at, ctx)) : undefined) ??
    (has(s, "tls")
      ? eachOf(s.tls, child(path, "tls"), (r, at) => tlsRoute(r, at, hosts, gateways))
      : undefined) ??
    (has(s, "tcp") ? eachOf(s.tcp, child(path, "tcp"), tcpRoute) : undefined) ??
    (has(s, "exportTo") ? exportToCheck(namespace)(s.exportTo, child(path, "exportTo")) : undefined)
  );
}

/** isSniHost: a TLS route matches on SNI hosts (then a gateway's hosts may be `outbound_.<port>_._.<host>`). */
function isSniHost(s: Record<string, unknown>): boolean {
  return (Array.isArray(s.tls) ? s.tls : []).some(
    (t) =>
      isObject(t) && Array.isArray(t.match) && t.match.some((m) => isObject(m) && nonEmpty(m, "sniHosts")),
  );
}

/**
 * ValidateWildcardDomainForVirtualServiceBoundToGateway: with SNI routes, a gateway's host may be
 * the SNI name Istio generates for AUTO_PASSTHROUGH, `outbound_.<port>_._.<hostname>`.
 */
export function gatewayHostProblem(sni: boolean, host: string): string | undefined {
  if (host === "" || host.length > 255) return wildcardDomainProblem(host);
  if (!sni || !host.startsWith("outbound_")) return wildcardDomainProblem(host);
  const parts = host.split("_");
  if (parts.length < 4)
    return `domain name ${host} invalid, should follow 'outbound_.<port>_._.<hostname>' format`;
  const trim = (x: string) => x.replace(/^\.+|\.+$/g, "");
  const [direction, port, hostname] = [
    parts[0] as string,
    trim(parts[1] as string),
    trim(parts[3] as string),
  ];
  if (direction !== "outbound") return `domain name "${host}" invalid (label "${direction}" invalid)`;
  if (!/[0-9]/.test(port))
    return `domain name "${host}" invalid (label "${port}" invalid). should follow outbound_.<port>_._.<hostname> format`;
  if (!/[a-zA-Z]/.test(hostname))
    return `domain name "${host}" invalid (label "${hostname}" invalid). should follow outbound_.<port>_._.<hostname> format`;
  return undefined;
}

/** The hosts: valid (or IP addresses), `*` only on gateways, no two overlapping. */
function vsHosts(hosts: string[], path: string, gatewayOnly: boolean, sni: boolean): P {
  for (let i = 0; i < hosts.length; i++) {
    const h = hosts[i] as string;
    const at = `${path}[${i}]`;
    const why = gatewayOnly ? gatewayHostProblem(sni, h) : wildcardDomainProblem(h);
    if (why) {
      if (!goIpFamily(h)) return { field: at, message: why };
    } else if (!gatewayOnly && h === "*")
      return {
        field: at,
        message: "wildcard host * is not allowed for virtual services bound to the mesh gateway",
      };
  }
  for (let i = 0; i < hosts.length; i++)
    for (let j = i + 1; j < hosts.length; j++)
      if (hostMatches(hosts[i] as string, hosts[j] as string))
        return {
          field: `${path}[${j}]`,
          message: `duplicate hosts in virtual service: ${hosts[i]} & ${hosts[j]}`,
        };
  return undefined;
}

/** validateTLSRoute: SNI matches within the hosts, and destinations. */
function tlsRoute(r: unknown, path: string, hosts: readonly string[], gateways: readonly string[]): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  if (!nonEmpty(r, "match"))
    return { field: child(path, "match"), message: "TLS route must have at least one match condition" };
  const p = eachOf(r.match, child(path, "match"), (m, at) => {
    if (!isObject(m)) return { field: at, message: `must be an object, got ${typeName(m)}` };
    if (!nonEmpty(m, "sniHosts"))
      return { field: child(at, "sniHosts"), message: "TLS match must have at least one SNI host" };
    return (
      eachOf(m.sniHosts, child(at, "sniHosts"), (h, hp) => sniHost(h, hp, hosts, gateways)) ?? l4Match(m, at)
    );
  });
  if (p) return p;
  if (!nonEmpty(r, "route")) return { field: child(path, "route"), message: "TLS route is required" };
  return routeDestinations(r.route, child(path, "route"), false);
}

/** validateSniHost: a valid name (an IP is only a warning) that is a subset of one of the hosts. */
function sniHost(h: unknown, path: string, hosts: readonly string[], gateways: readonly string[]): P {
  if (typeof h !== "string") return { field: path, message: `must be a string, got ${typeName(h)}` };
  const why = gateways.includes("mesh") ? wildcardDomainProblem(h) : gatewayHostProblem(true, h);
  if (why) return goIpFamily(h) ? undefined : { field: path, message: why };
  if (hosts.some((x) => hostSubsetOf(h, x))) return undefined;
  return {
    field: path,
    message: `SNI host ${quote(h)} is not a compatible subset of any of the virtual service hosts: [${hosts.join(", ")}]`,
  };
}

/** validateTCPRoute: matches and at least one destination. */
function tcpRoute(r: unknown, path: string): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  const p = has(r, "match")
    ? eachOf(r.match, child(path, "match"), (m, at) =>
        isObject(m) ? l4Match(m, at) : { field: at, message: `must be an object, got ${typeName(m)}` },
      )
    : undefined;
  if (p) return p;
  if (!nonEmpty(r, "route")) return { field: child(path, "route"), message: "TCP route is required" };
  return routeDestinations(r.route, child(path, "route"), false);
}

/** The L4 match fields TCP and TLS matches share: destination subnets, port, source labels, gateways. */
function l4Match(m: Record<string, unknown>, path: string): P {
  if (has(m, "destinationSubnets")) {
    const p = eachOf(m.destinationSubnets, child(path, "destinationSubnets"), (s, at) => {
      if (typeof s !== "string") return { field: at, message: `must be a string, got ${typeName(s)}` };
      const why = ipSubnetProblem(s);
      return why ? { field: at, message: why } : undefined;
    });
    if (p) return p;
  }
  const port = matchPort(m, path);
  if (port) return port;
  return (
    (has(m, "sourceLabels") ? labelMap(m.sourceLabels, child(path, "sourceLabels")) : undefined) ??
    (has(m, "gateways") ? gatewayNames(m.gateways, child(path, "gateways")) : undefined)
  );
}
