/**
 * ServiceEntry ─▶ model Services (one per host) and their Endpoints, as Istio's serviceentry
 * registry converts them (pilot/pkg/serviceregistry/serviceentry conversion.go convertServices,
 * convertServiceEntryToInstances, and controller.go's WorkloadEntry selection). The services
 * belong to the "External" provider. Pure and canonical: equal inputs give equal JSON.
 */

import type { Endpoint, Resolution, Service, ServicePort } from "../../model/index.ts";
import { parseIp } from "../../model/ip.ts";
import { sortUniqueEndpoints } from "../../shards/endpoint-order.ts";
import { child } from "../check.ts";
import { sortedRecord, sortedUnique } from "../kube/canonical.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { type IstioConfig, selectorLabels, selects } from "./common.ts";
import type { locations, resolutions } from "./validate-service-entry.ts";
import {
  type EndpointServicePort,
  servableAddress,
  type WorkloadEntryConfig,
  type WorkloadEntrySpec,
  workloadEndpoint,
  workloadEntryLabels,
  workloadShapeUnsupported,
} from "./workload-entry.ts";

/** A validated ServiceEntry port. */
export interface ServiceEntryPort extends EndpointServicePort {
  protocol?: string;
}

/** A validated ServiceEntry spec (see validate-service-entry.ts). */
export interface ServiceEntrySpec {
  hosts: string[];
  addresses?: string[];
  ports?: ServiceEntryPort[];
  location?: (typeof locations)[number];
  resolution?: (typeof resolutions)[number];
  endpoints?: WorkloadEntrySpec[];
  workloadSelector?: { labels?: Record<string, string> };
  exportTo?: string[];
  subjectAltNames?: string[];
}

/** A stored ServiceEntry: the shared envelope around a validated spec. */
export type ServiceEntryConfig = IstioConfig<ServiceEntrySpec>;

/** ServiceEntry resolution ▶ model resolution (Istio convertServices). Absent = NONE. */
export function serviceEntryResolution(spec: Pick<ServiceEntrySpec, "resolution">): Resolution {
  switch (spec.resolution ?? "NONE") {
    case "STATIC":
      return "ClientSideLB";
    case "DNS":
      return "DNSLB";
    case "DNS_ROUND_ROBIN":
      return "DNSRoundRobinLB";
    default:
      return "Passthrough";
  }
}

/** True for DNS and DNS_ROUND_ROBIN: endpoints are hostnames the client resolves (Istio isDNSTypeServiceEntry). */
export function isDnsServiceEntry(spec: Pick<ServiceEntrySpec, "resolution">): boolean {
  return spec.resolution === "DNS" || spec.resolution === "DNS_ROUND_ROBIN";
}

/** A port as the model names it: its protocol from the `protocol` field only (empty ▶ detected), as Istio. */
export function serviceEntryPort(p: ServiceEntryPort): ServicePort {
  return { name: p.name, port: p.number, protocol: parseProtocol(p.protocol ?? "") };
}

/** The hosts of a ServiceEntry, each once, in spec order. */
export function serviceEntryHosts(spec: Pick<ServiceEntrySpec, "hosts">): string[] {
  return [...new Set(spec.hosts)];
}

/**
 * One Service per host (Istio convertServices): hostname and name the host as written (no short
 * name expansion, as Istio), namespace and cluster of the config, resolution mapped, the spec's
 * addresses (a host prefix `/32` or `/128` written as the plain IP; none ▶ []), ports, the
 * config's labels, meshExternal unless MESH_INTERNAL, exportTo and subjectAltNames when set.
 */
export function convertServiceEntry(se: ServiceEntryConfig): Service[] {
  const spec = se.spec;
  const addresses = [...new Set((spec.addresses ?? []).map(hostPrefixAsIp))];
  const ports = (spec.ports ?? []).map(serviceEntryPort);
  const exportTo = sortedUnique(spec.exportTo ?? []);
  const sans = sortedUnique(spec.subjectAltNames ?? []);
  return serviceEntryHosts(spec).map((host) => ({
    hostname: host,
    name: host,
    namespace: se.namespace,
    clusterId: se.clusterId,
    resolution: serviceEntryResolution(spec),
    addresses: [...addresses],
    ports: ports.map((p) => ({ ...p })),
    labels: sortedRecord(se.labels),
    ...((spec.location ?? "MESH_EXTERNAL") === "MESH_EXTERNAL" && { meshExternal: true }),
    ...(exportTo.length > 0 && { exportTo }),
    ...(sans.length > 0 && { subjectAltNames: sans }),
  }));
}

function hostPrefixAsIp(address: string): string {
  const [ip = "", bits] = address.split("/");
  if (bits === undefined) return address;
  const parsed = parseIp(ip);
  return parsed.ok && Number(bits) === parsed.bytes.length * 8 ? ip : address;
}

/** The endpoints of one host of a ServiceEntry, sorted and unique (see sortUniqueEndpoints). */
export interface HostEndpoints {
  hostname: string;
  endpoints: Endpoint[];
}

/** What endpoint conversion needs beyond the configs. */
export interface EndpointOptions {
  trustDomain: string;
}

/**
 * Whether a ServiceEntry selects a WorkloadEntry (Istio getWorkloadServiceEntries): it has a
 * workloadSelector, they share a namespace, and the selector matches the WorkloadEntry's labels
 * (spec labels with metadata labels over them; an empty selector selects all).
 */
export function selectsWorkloadEntry(se: ServiceEntryConfig, we: WorkloadEntryConfig): boolean {
  const selector = selectorLabels(se.spec.workloadSelector);
  return (
    selector !== undefined && se.namespace === we.namespace && selects(selector, workloadEntryLabels(we))
  );
}

/**
 * The endpoints of every host of a ServiceEntry, per host in host order:
 * - workloadSelector ▶ every WorkloadEntry of `candidates` it selects (selectsWorkloadEntry), one
 *   endpoint per ServiceEntry port (UNHEALTHY for a not-ready Pod the caller kept); a hostname
 *   address only for DNS resolution, as Istio;
 * - inline `endpoints` ▶ one endpoint per endpoint and port (addresses kept: hostnames for DNS);
 * - DNS or DNS_ROUND_ROBIN with neither ▶ the host itself on each port (targetPort, else number),
 *   for a LOGICAL_DNS/STRICT_DNS cluster to resolve; no labels;
 * - otherwise none (NONE passes through; STATIC without endpoints has none).
 * Unix socket and network-only (empty) addresses are skipped: see serviceEntryUnsupportedFields.
 */
export function serviceEntryEndpoints(
  se: ServiceEntryConfig,
  candidates: readonly WorkloadEntryConfig[],
  options: EndpointOptions,
): HostEndpoints[] {
  const spec = se.spec;
  const ports = spec.ports ?? [];
  const dns = isDnsServiceEntry(spec);
  const ctx = { namespace: se.namespace, clusterId: se.clusterId, trustDomain: options.trustDomain };
  const built: Endpoint[] = [];
  const selected = selectorLabels(spec.workloadSelector) !== undefined;
  const workloads: { spec: WorkloadEntrySpec; labels: Record<string, string>; unhealthy?: true }[] = selected
    ? candidates
        .filter((we) => selectsWorkloadEntry(se, we))
        .map((we) => ({
          spec: we.spec,
          labels: workloadEntryLabels(we),
          ...(we.unhealthy && { unhealthy: true }),
        }))
    : (spec.endpoints ?? []).map((e) => ({ spec: e, labels: sortedRecord(e.labels) }));
  for (const w of workloads) {
    const address = w.spec.address ?? "";
    if (!servableAddress(address, dns, parseIp(address).ok)) continue;
    const health = w.unhealthy ? "UNHEALTHY" : "HEALTHY";
    for (const port of ports) built.push(workloadEndpoint(w.spec, w.labels, port, ctx, health));
  }
  const hostsResolveThemselves = dns && !selected && (spec.endpoints ?? []).length === 0;
  const shared = sortUniqueEndpoints(built);
  return serviceEntryHosts(spec).map((hostname) => ({
    hostname,
    // Each host gets its own copies: no two records share a mutable object.
    endpoints: hostsResolveThemselves
      ? sortUniqueEndpoints(ports.map((port) => hostEndpoint(hostname, port)))
      : shared.map((e) => ({ ...e, labels: { ...e.labels }, locality: { ...e.locality } })),
  }));
}

function hostEndpoint(hostname: string, port: ServiceEntryPort): Endpoint {
  return {
    address: hostname,
    port: port.targetPort !== undefined && port.targetPort > 0 ? port.targetPort : port.number,
    servicePortName: port.name,
    labels: {},
    locality: { region: "", zone: "", subzone: "" },
    serviceAccount: "",
    health: "HEALTHY",
  };
}

const serviceEntryFields = new Set([
  "hosts",
  "addresses",
  "ports",
  "location",
  "resolution",
  "endpoints",
  "workloadSelector",
  "exportTo",
  "subjectAltNames",
]);

/**
 * The fields of a validated ServiceEntry spec that are accepted but not implemented, as
 * `spec.<field>` paths, so ingest can report them once: DYNAMIC_DNS resolution (Envoy's dynamic
 * forward proxy; served as passthrough), endpoints with a Unix socket or no address (served by
 * Istio through a network gateway), targetPort under NONE resolution (Istio's passthrough target
 * ports), unknown fields of the spec or of an endpoint.
 */
export function serviceEntryUnsupportedFields(spec: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  const resolution = spec.resolution ?? "NONE";
  if (resolution === "DYNAMIC_DNS") out.push("spec.resolution");
  const ports = Array.isArray(spec.ports) ? (spec.ports as Record<string, unknown>[]) : [];
  ports.forEach((p, i) => {
    if (resolution === "NONE" && typeof p.targetPort === "number" && p.targetPort > 0)
      out.push(`spec.ports[${i}].targetPort`);
  });
  const endpoints = Array.isArray(spec.endpoints) ? (spec.endpoints as Record<string, unknown>[]) : [];
  endpoints.forEach((e, i) => {
    out.push(...workloadShapeUnsupported(e, `spec.endpoints[${i}]`));
  });
  for (const key of Object.keys(spec)) if (!serviceEntryFields.has(key)) out.push(child("spec", key));
  return out;
}
