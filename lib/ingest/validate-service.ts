/**
 * v1 Service as the API server validates it (pkg/apis/core/validation ValidateService), for the
 * fields the registry reads and those that must agree with them: ports, cluster IPs and their
 * families, external IPs and names, the load balancer status. Defaults are applied before the
 * API server validates, so a field it would default (type, protocol, targetPort) may be absent.
 */

import { parseIp } from "../model/ip.ts";
import {
  all,
  arrayOf,
  boolean,
  type Check,
  child,
  integer,
  ip,
  isObject,
  named,
  object,
  oneOf,
  type Problem,
  port,
  portNumOrName,
  quote,
  string,
} from "../registry/check.ts";
import { dns1123Label, dns1123Subdomain, ianaPortName, qualifiedName } from "../registry/names.ts";
import { labels } from "./validate-meta.ts";

/** core/v1 Protocol. */
export const protocols = ["TCP", "UDP", "SCTP"] as const;

const servicePort = object(
  {
    name: named(dns1123Label, true),
    port,
    protocol: oneOf(protocols),
    appProtocol: named(qualifiedName),
    targetPort: portNumOrName(ianaPortName),
    nodePort: integer(0, 65535),
  },
  ["port"],
);

/** Port names: required when there is more than one port, and unique. */
const portNames: Check = (ports, path) => {
  if (!Array.isArray(ports)) return undefined;
  const seen = new Set<string>();
  for (let i = 0; i < ports.length; i++) {
    const name = (ports[i] as { name?: string }).name ?? "";
    const at = child(`${path}[${i}]`, "name");
    if (name === "" && ports.length > 1)
      return { field: at, message: "is required when a Service has more than one port" };
    if (seen.has(name)) return { field: at, message: `duplicate port name ${quote(name)}` };
    seen.add(name);
  }
  return undefined;
};

const unlessEmpty =
  (check: Check): Check =>
  (v, path) =>
    v === "" ? undefined : check(v, path);

const hostnameNotIp: Check = (v, path) =>
  named(dns1123Subdomain)(v, path) ??
  (parseIp(v as string).ok
    ? { field: path, message: `${quote(v)} must be a DNS name, not an IP address` }
    : undefined);

const status = object({
  loadBalancer: object({
    // Either may be "" (unset): Go leaves both out when empty, a builder may not.
    ingress: arrayOf(object({ ip: unlessEmpty(ip()), hostname: unlessEmpty(hostnameNotIp) })),
  }),
});

const spec = object({
  type: oneOf(["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]),
  clusterIP: string,
  clusterIPs: arrayOf(string),
  ipFamilies: arrayOf(oneOf(["IPv4", "IPv6"]), 2),
  ports: all(arrayOf(servicePort), portNames),
  selector: labels,
  externalName: string,
  externalIPs: arrayOf(ip()),
  loadBalancerIP: string,
  publishNotReadyAddresses: boolean,
  internalTrafficPolicy: oneOf(["Cluster", "Local"]),
  trafficDistribution: string,
});

/** Checks a Service object's `spec` and `status` (metadata is checked for every kind). */
export const serviceCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (obj.spec === undefined || obj.spec === null) return { field: specPath, message: "is required" };
  const p =
    spec(obj.spec, specPath) ?? (obj.status == null ? undefined : status(obj.status, child(path, "status")));
  return p ?? crossChecks(obj.spec as Record<string, unknown>, specPath);
};

function crossChecks(s: Record<string, unknown>, path: string): Problem | undefined {
  const type = (s.type as string | undefined) ?? "ClusterIP";
  const clusterIP = (s.clusterIP as string | undefined) ?? "";
  const headless = clusterIP === "None";
  if (type === "ExternalName") {
    const name = ((s.externalName as string | undefined) ?? "").replace(/\.$/, "");
    if (name === "")
      return { field: child(path, "externalName"), message: "is required for an ExternalName Service" };
    const p = named(dns1123Subdomain)(name, child(path, "externalName"));
    if (p) return p;
    if (clusterIP !== "" || ((s.clusterIPs as unknown[] | undefined)?.length ?? 0) > 0)
      return { field: child(path, "clusterIP"), message: "may not be set for an ExternalName Service" };
  } else if (((s.ports as unknown[] | undefined)?.length ?? 0) === 0 && !headless) {
    return {
      field: child(path, "ports"),
      message: "is required: a Service that is not headless or ExternalName has at least one port",
    };
  }
  if (s.loadBalancerIP !== undefined && s.loadBalancerIP !== "") {
    const p = ip()(s.loadBalancerIP, child(path, "loadBalancerIP"));
    if (p) return p;
  }
  return clusterIps(s, path, clusterIP);
}

/** clusterIP and clusterIPs: "" or "None" or IPs; clusterIPs[0] is clusterIP; one IP per family, in ipFamilies' order. */
function clusterIps(s: Record<string, unknown>, path: string, clusterIP: string): Problem | undefined {
  const ips = (s.clusterIPs as string[] | undefined) ?? [];
  const families = (s.ipFamilies as string[] | undefined) ?? [];
  if (clusterIP !== "" && clusterIP !== "None") {
    const p = ip()(clusterIP, child(path, "clusterIP"));
    if (p) return p;
  }
  if (ips.length > 0 && clusterIP !== "" && ips[0] !== clusterIP)
    return {
      field: `${child(path, "clusterIPs")}[0]`,
      message: `${quote(ips[0])} must match spec.clusterIP ${quote(clusterIP)}`,
    };
  if (ips.length > 2)
    return {
      field: child(path, "clusterIPs"),
      message: `may hold at most 2 addresses (one per IP family), got ${ips.length}`,
    };
  if (new Set(families).size !== families.length)
    return { field: child(path, "ipFamilies"), message: `${quote(families)} lists an IP family twice` };
  const seen = new Set<string>();
  for (let i = 0; i < ips.length; i++) {
    const at = `${child(path, "clusterIPs")}[${i}]`;
    const value = ips[i] as string;
    if (value === "None" || value === "") {
      if (i > 0 || ips.length > 1)
        return { field: at, message: `${quote(value)} is allowed only as the one and only value` };
      continue;
    }
    const p = ip()(value, at);
    if (p) return p;
    const parsed = parseIp(value);
    const family = parsed.ok ? parsed.family : "";
    if (seen.has(family))
      return { field: at, message: `${quote(value)}: may specify no more than one IP for each IP family` };
    seen.add(family);
    if (families[i] !== undefined && families[i] !== family)
      return {
        field: at,
        message: `${quote(value)} must be an ${families[i]} address, as spec.ipFamilies[${i}] says`,
      };
  }
  return undefined;
}
