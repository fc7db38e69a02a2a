/**
 * ServiceEntry as istiod's validation webhook checks it (pkg/config/validation ValidateServiceEntry),
 * with the bounds of its CRD schema: hosts, addresses, ports, location, resolution and the rules
 * that tie resolution to endpoints, workloadSelector, exportTo and subjectAltNames. The first
 * problem wins and names its field, relative to the object (`object.spec.ports[1].number`).
 */
import {
  all,
  arrayOf,
  type Check,
  child,
  integer,
  isObject,
  named,
  object,
  oneOf,
  type Problem,
  port,
  quote,
  string,
  typeName,
} from "../../ingest/check.ts";
import { parseIp } from "../../ingest/ip.ts";
import { dns1123Label } from "../../ingest/names.ts";
import type { Protocol } from "../../model/index.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { exportToIn, istioHost, labelMap, networkingWorkloadSelector } from "./common.ts";
import { fqdn, maxLength, portMap, workloadEntryFields } from "./validate-workload-entry.ts";

/** ServiceEntry.Location values; absent = MESH_EXTERNAL (the proto default). */
export const locations = ["MESH_EXTERNAL", "MESH_INTERNAL"] as const;
/** The resolutions istiod's validation accepts; absent = NONE (the proto default). */
export const resolutions = ["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN"] as const;

/** A host of a ServiceEntry: an Istio host, but never the full wildcard `*`. */
const serviceEntryHost: Check = (v, path) =>
  v === "*"
    ? { field: path, message: `invalid host "*": a ServiceEntry cannot claim every host` }
    : istioHost(v, path);

/** An address: an IP, or a CIDR block `ip/bits` (istiod ValidateIPSubnet). */
export const ipOrCidr: Check = (v, path) => {
  const p = maxLength(64)(v, path);
  if (p) return p;
  const text = v as string;
  const parts = text.split("/");
  if (parts.length > 2)
    return { field: path, message: `${quote(text)} is not a valid IP address or CIDR block` };
  const ip = parseIp(parts[0] as string);
  if (!ip.ok)
    return { field: path, message: `${quote(text)} is not a valid IP address or CIDR block: ${ip.reason}` };
  if (parts.length === 2) {
    const bits = parts[1] as string;
    const max = ip.family === "IPv4" ? 32 : 128;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(bits) || Number(bits) > max)
      return {
        field: path,
        message: `${quote(text)} is not a valid CIDR block: prefix length must be 0-${max}`,
      };
  }
  return undefined;
};

/** A port protocol: empty (detected), or a name istio's protocol.Parse knows, any case. */
export const protocolName: Check = (v, path) =>
  maxLength(256)(v, path) ??
  (v === "" || parseProtocol(v as string) !== "UnsupportedProtocol"
    ? undefined
    : {
        field: path,
        message: `unsupported protocol ${quote(v)}; want one of HTTP, HTTPS, HTTP2, HTTP_PROXY, GRPC, GRPC-WEB, TCP, TLS, UDP, MONGO, MYSQL, REDIS`,
      });

const servicePort = object(
  {
    number: port,
    protocol: protocolName,
    name: named(dns1123Label),
    // 0 is proto3's "unset" (then the endpoint port is the number); istiod checks it only when set.
    targetPort: integer(0, 65535),
  },
  ["number", "name"],
);

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

const endpointShape: Check = (v, path) =>
  isObject(v) ? undefined : { field: path, message: `must be an object, got ${typeName(v)}` };

const nonEmpty: Check = (v, path) =>
  Array.isArray(v) && v.length === 0
    ? { field: path, message: "service entry must have at least one host" }
    : undefined;

const fields = (namespace: string): Check =>
  object(
    {
      hosts: all(arrayOf(serviceEntryHost, 256), nonEmpty),
      addresses: arrayOf(ipOrCidr, 256),
      ports: all(arrayOf(servicePort, 256), uniquePorts),
      location: oneOf(locations),
      resolution: oneOf(resolutions),
      endpoints: arrayOf(endpointShape, 4096),
      workloadSelector: networkingWorkloadSelector,
      exportTo: all(arrayOf(string, 256), exportToIn(namespace)),
      subjectAltNames: arrayOf(string, 256),
    },
    ["hosts"],
  );

/** Checks a ServiceEntry object's `spec` (metadata is checked for every kind). */
export const serviceEntryCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  const spec = obj.spec;
  if (spec === undefined || spec === null) return { field: specPath, message: "is required" };
  const namespace =
    isObject(obj.metadata) && typeof obj.metadata.namespace === "string" ? obj.metadata.namespace : "";
  return fields(namespace)(spec, specPath) ?? crossChecks(spec as Record<string, unknown>, specPath);
};

interface PortView {
  name: string;
  number: number;
  protocol?: string;
}

/** The rules that tie fields together, checked once every field is well formed. */
function crossChecks(s: Record<string, unknown>, path: string): Problem | undefined {
  const hosts = s.hosts as string[];
  const addresses = (s.addresses as string[] | undefined) ?? [];
  const ports = (s.ports as PortView[] | undefined) ?? [];
  const endpoints = (s.endpoints as Record<string, unknown>[] | undefined) ?? [];
  const resolution = (s.resolution as string | undefined) ?? "NONE";
  const hasSelector = s.workloadSelector !== undefined && s.workloadSelector !== null;
  const endpointsPath = child(path, "endpoints");

  if (hasSelector && endpoints.length > 0)
    return {
      field: endpointsPath,
      message: "only one of workloadSelector or endpoints is allowed in a ServiceEntry",
    };
  const cidr = addresses.findIndex((a) => a.includes("/"));
  if (cidr >= 0 && resolution !== "NONE" && resolution !== "STATIC")
    return {
      field: `${child(path, "addresses")}[${cidr}]`,
      message: `CIDR addresses are allowed only for NONE/STATIC resolution types, not ${resolution}`,
    };

  const servicePorts = new Set(ports.map((p) => p.name));
  const p = resolutionRules(resolution, hosts, endpoints, servicePorts, path);
  if (p) return p;

  // Plain TCP carries nothing that tells two hosts apart, so several hosts need HTTP or TLS ports.
  if (resolution !== "NONE" && hosts.length > 1) {
    const i = ports.findIndex((port) => !httpOrTls(parseProtocol(port.protocol ?? "")));
    if (i >= 0)
      return {
        field: `${child(path, "ports")}[${i}].protocol`,
        message: `multiple hosts provided with non-HTTP, non-TLS port ${quote(ports[i]?.name)}`,
      };
  }
  return undefined;
}

function resolutionRules(
  resolution: string,
  hosts: readonly string[],
  endpoints: readonly Record<string, unknown>[],
  servicePorts: ReadonlySet<string>,
  path: string,
): Problem | undefined {
  const endpointsPath = child(path, "endpoints");
  switch (resolution) {
    case "NONE":
      return endpoints.length > 0
        ? { field: endpointsPath, message: "no endpoints should be provided for resolution type NONE" }
        : undefined;
    case "STATIC": {
      const check = workloadEntryFields({ allowHostname: false, servicePorts });
      for (let i = 0; i < endpoints.length; i++) {
        const p = check(endpoints[i], `${endpointsPath}[${i}]`);
        if (p) return p;
      }
      return undefined;
    }
    default: {
      // DNS and DNS_ROUND_ROBIN: without endpoints the proxy resolves the hosts themselves.
      if (endpoints.length === 0) {
        for (let i = 0; i < hosts.length; i++) {
          if (fqdn(hosts[i], ""))
            return {
              field: `${child(path, "hosts")}[${i}]`,
              message: `hosts must be FQDN if no endpoints are provided for resolution mode ${resolution}, got ${quote(hosts[i])}`,
            };
        }
      }
      if (resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1)
        return {
          field: endpointsPath,
          message: `there must only be 0 or 1 endpoint for resolution mode DNS_ROUND_ROBIN, got ${endpoints.length}`,
        };
      for (let i = 0; i < endpoints.length; i++) {
        const p = dnsEndpoint(
          endpoints[i] as Record<string, unknown>,
          servicePorts,
          `${endpointsPath}[${i}]`,
        );
        if (p) return p;
      }
      return undefined;
    }
  }
}

/** A DNS endpoint as istiod checks it: an IP or an FQDN, valid labels, ports of the ServiceEntry. */
function dnsEndpoint(
  e: Record<string, unknown>,
  servicePorts: ReadonlySet<string>,
  path: string,
): Problem | undefined {
  const at = child(path, "address");
  const address = e.address ?? "";
  const shape = object({
    address: maxLength(256),
    labels: labelMap,
    ports: portMap(servicePorts),
    network: maxLength(2048),
    locality: maxLength(2048),
    weight: integer(0, 4294967295),
    serviceAccount: maxLength(253),
  })(e, path);
  if (shape) return shape;
  if (!parseIp(address as string).ok && fqdn(address, at))
    return { field: at, message: `endpoint address ${quote(address)} is not a valid FQDN or an IP address` };
  return undefined;
}

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
