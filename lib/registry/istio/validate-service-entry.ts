/**
 * ServiceEntry as istiod's validation webhook checks it (pkg/config/validation ValidateServiceEntry),
 * with the bounds and rules of its CRD schema: hosts, addresses, ports, location, resolution and
 * the rules that tie resolution to hosts, endpoints, addresses and ports, workloadSelector,
 * exportTo. The first problem wins and names its field, relative to the object
 * (`object.spec.ports[1].number`). Warnings: warnings.ts.
 */

import type { Protocol } from "../../model/index.ts";
import {
  all,
  arrayOf,
  type Check,
  child,
  isObject,
  object,
  oneOf,
  type Problem,
  port,
  quote,
  string,
} from "../check.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { istioHost, istioMetadata, networkingWorkloadSelector } from "./common.ts";
import { fqdnProblem, goIpFamily, ipSubnetProblem, isDns1123Label } from "./istio-names.ts";
import { maxLength, workloadEntryFields } from "./validate-workload-entry.ts";
import { exportToCheck } from "./visibility.ts";

/** ServiceEntry.Location values; absent = MESH_EXTERNAL (the proto default). */
export const locations = ["MESH_EXTERNAL", "MESH_INTERNAL"] as const;
/** The resolutions istiod's validation accepts; absent = NONE (the proto default). */
export const resolutions = ["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN", "DYNAMIC_DNS"] as const;

/** A host of a ServiceEntry: an Istio host, but never the full wildcard `*`. */
const serviceEntryHost: Check = (v, path) =>
  v === "*" ? { field: path, message: "invalid host *" } : istioHost(v, path);

/** An address: an IP, or a CIDR block `ip/bits` (istiod ValidateIPSubnet), at most 64 characters. */
export const ipOrCidr: Check = (v, path) => {
  const p = maxLength(64)(v, path);
  if (p) return p;
  const why = ipSubnetProblem(v as string);
  return why ? { field: path, message: why } : undefined;
};

/** A port protocol: empty (detected), or a name istio's protocol.Parse knows, any case. */
export const protocolName: Check = (v, path) =>
  maxLength(256)(v, path) ??
  (v === "" || parseProtocol(v as string) !== "UnsupportedProtocol"
    ? undefined
    : { field: path, message: `unsupported protocol: ${v}` });

const portName: Check = (v, path) =>
  maxLength(256)(v, path) ??
  (isDns1123Label(v as string) ? undefined : { field: path, message: `invalid port name: ${v}` });

const servicePort = object({ number: port, protocol: protocolName, name: portName, targetPort: port }, [
  "number",
  "name",
]);

/** Port names and numbers are unique (istiod: "already defined"). */
const uniquePorts: Check = (v, path) => {
  if (!Array.isArray(v)) return undefined;
  const names = new Set<string>();
  const numbers = new Set<number>();
  for (let i = 0; i < v.length; i++) {
    const p = v[i] as { name: string; number: number };
    if (names.has(p.name))
      return {
        field: `${path}[${i}].name`,
        message: `service entry port name ${quote(p.name)} already defined`,
      };
    if (numbers.has(p.number))
      return { field: `${path}[${i}].number`, message: `service entry port ${p.number} already defined` };
    names.add(p.name);
    numbers.add(p.number);
  }
  return undefined;
};

const nonEmptyHosts: Check = (v, path) =>
  Array.isArray(v) && v.length === 0
    ? { field: path, message: "service entry must have at least one host" }
    : undefined;

/** The CRD's rules for every endpoint, whatever the resolution. */
const endpointShape: Check = (v, path) => {
  const p = object({ address: maxLength(256) })(v, path);
  if (p || !isObject(v)) return p;
  if (!v.address && !v.network) return { field: child(path, "address"), message: "Address is required" };
  return undefined;
};

const fields = (namespace: string): Check =>
  object(
    {
      hosts: all(arrayOf(serviceEntryHost, 256), nonEmptyHosts),
      addresses: arrayOf(ipOrCidr, 256),
      ports: all(arrayOf(servicePort, 256), uniquePorts),
      location: oneOf(locations),
      resolution: oneOf(resolutions),
      endpoints: arrayOf(endpointShape, 4096),
      workloadSelector: networkingWorkloadSelector,
      exportTo: exportToCheck(namespace, { serviceEntry: true }),
      subjectAltNames: arrayOf(string),
    },
    ["hosts"],
  );

/** Checks a ServiceEntry object's metadata annotations and `spec`. */
export const serviceEntryCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  const spec = obj.spec;
  if (spec === undefined || spec === null) return { field: specPath, message: "is required" };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const namespace = typeof meta.namespace === "string" ? meta.namespace : "";
  return (
    istioMetadata(obj, path) ??
    fields(namespace)(spec, specPath) ??
    crossChecks(spec as Record<string, unknown>, specPath, usesWaypoint(meta.labels))
  );
};

/** usesWaypoint: the `istio.io/use-waypoint` label names a waypoint (not "none"). */
function usesWaypoint(labels: unknown): boolean {
  const v = isObject(labels) ? labels["istio.io/use-waypoint"] : undefined;
  return typeof v === "string" && v !== "" && v.toLowerCase() !== "none";
}

interface PortView {
  name: string;
  number: number;
  protocol?: string;
}

/** The rules that tie fields together, checked once every field is well formed. */
function crossChecks(s: Record<string, unknown>, path: string, waypoint: boolean): Problem | undefined {
  const hosts = s.hosts as string[];
  const addresses = (s.addresses as string[] | undefined) ?? [];
  const ports = (s.ports as PortView[] | undefined) ?? [];
  const endpoints = (s.endpoints as Record<string, unknown>[] | undefined) ?? [];
  const resolution = (s.resolution as string | undefined) ?? "NONE";
  const at = (k: string) => child(path, k);
  if (s.workloadSelector !== undefined && s.workloadSelector !== null && endpoints.length > 0)
    return {
      field: at("endpoints"),
      message: "only one of WorkloadSelector or Endpoints is allowed in Service Entry",
    };
  const cidr = addresses.findIndex((a) => a.includes("/"));
  if (cidr >= 0 && resolution !== "NONE" && resolution !== "STATIC")
    return {
      field: `${at("addresses")}[${cidr}]`,
      message: "CIDR addresses are allowed only for NONE/STATIC resolution types",
    };
  const p = resolutionRules(
    s,
    resolution,
    hosts,
    endpoints,
    new Set(ports.map((x) => x.name)),
    path,
    waypoint,
  );
  if (p) return p;
  // Plain TCP carries nothing that tells two hosts apart, so several hosts need HTTP or TLS ports.
  if (resolution !== "NONE" && hosts.length > 1) {
    const i = ports.findIndex((x) => !httpOrTls(parseProtocol(x.protocol ?? "")));
    if (i >= 0)
      return {
        field: `${at("ports")}[${i}].protocol`,
        message: "multiple hosts provided with non-HTTP, non-TLS ports",
      };
  }
  return undefined;
}

function resolutionRules(
  s: Record<string, unknown>,
  resolution: string,
  hosts: readonly string[],
  endpoints: readonly Record<string, unknown>[],
  servicePorts: ReadonlySet<string>,
  path: string,
  waypoint: boolean,
): Problem | undefined {
  const endpointsPath = child(path, "endpoints");
  const each = (check: Check) => {
    for (let i = 0; i < endpoints.length; i++) {
      const p = check(endpoints[i], `${endpointsPath}[${i}]`);
      if (p) return p;
    }
    return undefined;
  };
  switch (resolution) {
    case "NONE":
      return endpoints.length > 0
        ? { field: endpointsPath, message: "no endpoints should be provided for resolution type none" }
        : undefined;
    case "STATIC":
      return each(workloadEntryFields({ allowHostname: false, servicePorts }));
    case "DYNAMIC_DNS":
      return dynamicDns(s, hosts, path, waypoint);
    default: {
      // DNS and DNS_ROUND_ROBIN: without endpoints the proxy resolves the hosts themselves.
      if (endpoints.length === 0) {
        const i = hosts.findIndex((h) => fqdnProblem(h));
        if (i >= 0)
          return {
            field: `${child(path, "hosts")}[${i}]`,
            message: `hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for resolution mode ${resolution}, ${fqdnProblem(hosts[i] as string)}`,
          };
      }
      if (resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1)
        return {
          field: endpointsPath,
          message: "there must only be 0 or 1 endpoint for resolution mode DNS_ROUND_ROBIN",
        };
      return each(dnsEndpoint(servicePorts));
    }
  }
}

/** DYNAMIC_DNS: wildcard hosts only, no addresses or endpoints, HTTP/TLS/GRPC/HTTP2 ports. */
function dynamicDns(
  s: Record<string, unknown>,
  hosts: readonly string[],
  path: string,
  waypoint: boolean,
): Problem | undefined {
  const mode = "resolution type DYNAMIC_DNS";
  const i = hosts.findIndex((h) => !h.startsWith("*"));
  if (i >= 0)
    return {
      field: `${child(path, "hosts")}[${i}]`,
      message: "host must be wildcarded for resolution mode DYNAMIC_DNS",
    };
  if (Array.isArray(s.addresses) && s.addresses.length > 0)
    return {
      field: child(path, "addresses"),
      message: `addresses cannot be set for ${mode}. HTTP route domains will only be generatedfrom the hosts field values`,
    };
  if (Array.isArray(s.endpoints) && s.endpoints.length > 0)
    return {
      field: child(path, "endpoints"),
      message: `endpoints cannot be set for ${mode}. Destination IP address determined from hostsfield values`,
    };
  const ports = (s.ports as PortView[] | undefined) ?? [];
  const j = ports.findIndex(
    (x) => !["HTTP", "TLS", "GRPC", "HTTP2"].includes(parseProtocol(x.protocol ?? "")),
  );
  if (j >= 0)
    return {
      field: `${child(path, "ports")}[${j}].protocol`,
      message: `only HTTP, TLS, GRPC, and HTTP2 protocols are supported for ${mode}`,
    };
  if (s.location === "MESH_INTERNAL" && waypoint)
    return {
      field: child(path, "location"),
      message: `location MESH_INTERNAL with ${mode} is not supported when using waypoints`,
    };
  return undefined;
}

/** A DNS endpoint as istiod checks it: an IP or an FQDN, valid labels, ports of the ServiceEntry. */
const dnsEndpoint =
  (servicePorts: ReadonlySet<string>): Check =>
  (e, path) => {
    const rules = workloadEntryFields({ allowHostname: true, servicePorts });
    const address = isObject(e) && typeof e.address === "string" ? e.address : "";
    if (!goIpFamily(address) && fqdnProblem(address))
      return {
        field: child(path, "address"),
        message: `endpoint address ${quote(address)} is not a valid FQDN or an IP address`,
      };
    return rules(e, path);
  };

/** Istio's protocol IsHTTP or IsTLS: the protocols whose hosts a proxy can tell apart. */
export function httpOrTls(p: Protocol): boolean {
  return (
    p === "HTTP" ||
    p === "HTTP2" ||
    p === "HTTP_PROXY" ||
    p === "GRPC" ||
    p === "GRPC-Web" ||
    p === "HTTPS" ||
    p === "TLS"
  );
}
