/**
 * v1 Service ─▶ model Service, as Istio's kube registry converts it
 * (istio pilot/pkg/serviceregistry/kube/conversion.go ConvertService).
 */
import type { Resolution, Service, ServicePort, TrafficDistribution } from "../../model/index.ts";
import { serviceHostname } from "../../model/index.ts";
import { sortedRecord, sortedUnique } from "./canonical.ts";
import { convertProtocol } from "./protocol.ts";
import type { EndpointSlice, KubeService, KubeServicePort } from "./types.ts";
import { CLUSTER_IP_NONE, SERVICE_NAME_LABEL } from "./types.ts";

/** Where a converted object came from and how its hostnames are spelled. */
export interface ServiceConversionOptions {
  /** The cluster (shard) that reported the object. */
  clusterId: string;
  /** `cluster.local` unless the cluster says otherwise. */
  domainSuffix: string;
}

/** The annotation that limits which namespaces see a service (Istio annotation.NetworkingExportTo). */
export const EXPORT_TO_ANNOTATION = "networking.istio.io/exportTo";

/** Istio's annotation alternative to spec.trafficDistribution (annotation.NetworkingTrafficDistribution). */
export const TRAFFIC_DISTRIBUTION_ANNOTATION = "networking.istio.io/traffic-distribution";

/**
 * Converts a Service as one cluster sees it. Pure and canonical: the same object gives the same
 * model, fields in a fixed order, labels sorted, optional fields only when set.
 * Hostname `<name>.<ns>.svc.<suffix>`; ExternalName with a name ▶ Alias and mesh-external;
 * `clusterIP: None` ▶ Passthrough with no addresses; otherwise ClientSideLB on every cluster IP,
 * primary first.
 */
export function convertService(obj: KubeService, options: ServiceConversionOptions): Service {
  const { name, namespace } = obj.metadata;
  const spec = obj.spec;
  const externalName = spec.type === "ExternalName" && spec.externalName ? spec.externalName : "";
  const { resolution, addresses } = resolve(externalName, spec.clusterIP, spec.clusterIPs);
  const withNodePorts = spec.type === "NodePort" || spec.type === "LoadBalancer";
  const externalAddresses = sortedUnique([...loadBalancerAddresses(obj), ...(spec.externalIPs ?? [])]);
  const exportTo = parseExportTo(obj.metadata.annotations?.[EXPORT_TO_ANNOTATION]);
  const trafficDistribution = convertTrafficDistribution(
    spec.trafficDistribution,
    obj.metadata.annotations?.[TRAFFIC_DISTRIBUTION_ANNOTATION],
  );
  return {
    hostname: serviceHostname(name, namespace, options.domainSuffix),
    name,
    namespace,
    clusterId: options.clusterId,
    resolution,
    addresses,
    ports: (spec.ports ?? []).map((p) => convertPort(p, withNodePorts)),
    labels: sortedRecord(obj.metadata.labels),
    ...(externalName !== "" && { meshExternal: true, externalName }),
    ...(externalAddresses.length > 0 && { externalAddresses }),
    ...(exportTo !== undefined && { exportTo }),
    ...(spec.publishNotReadyAddresses === true && { publishNotReadyAddresses: true }),
    ...(spec.internalTrafficPolicy === "Local" && { nodeLocal: true }),
    ...(trafficDistribution !== undefined && { trafficDistribution }),
  };
}

function resolve(
  externalName: string,
  clusterIP: string | undefined,
  clusterIPs: string[] | undefined,
): { resolution: Resolution; addresses: string[] } {
  // Headless: the client connects to the pod it resolved; the proxy must not load balance.
  if (clusterIP === CLUSTER_IP_NONE) return { resolution: "Passthrough", addresses: [] };
  // Istio resolves ExternalName services as an alias of the external name (its default since
  // ENABLE_EXTERNAL_NAME_ALIAS). They never have a cluster IP.
  const resolution: Resolution = externalName !== "" ? "Alias" : "ClientSideLB";
  const ips = clusterIPs && clusterIPs.length > 0 ? clusterIPs : clusterIP ? [clusterIP] : [];
  const addresses = ips.filter((ip) => ip !== "" && ip !== CLUSTER_IP_NONE);
  // A copy of its exact length (filter reserves room for 17): the store keeps the model.
  return { resolution, addresses: addresses.slice() };
}

/**
 * A Service port as the model names it: its name ("" when unnamed), its Istio protocol and, when
 * asked (NodePort and LoadBalancer services), the node port Kubernetes allocated.
 */
export function convertPort(port: KubeServicePort, withNodePort = false): ServicePort {
  const out: ServicePort = { name: port.name ?? "", port: port.port, protocol: convertProtocol(port) };
  if (withNodePort && typeof port.nodePort === "number" && port.nodePort > 0) out.nodePort = port.nodePort;
  return out;
}

/**
 * The load balancer's addresses, for LoadBalancer services only (as Istio): each ingress's IP,
 * or its hostname when it has no IP (Istio does not resolve it: ELB names change address).
 */
function loadBalancerAddresses(obj: KubeService): string[] {
  if (obj.spec.type !== "LoadBalancer") return [];
  return (obj.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || "");
}

/**
 * The exportTo annotation as a sorted, unique list: comma-separated, each entry trimmed, empty
 * entries dropped. Absent or "" ▶ undefined (public). Entries that are all empty ▶ [] (Istio
 * keeps "" entries, which match no namespace: the service is then visible nowhere).
 */
export function parseExportTo(annotation: string | undefined): string[] | undefined {
  if (annotation === undefined || annotation === "") return undefined;
  return sortedUnique(annotation.split(",").map((e) => e.trim()));
}

/**
 * Istio's GetTrafficDistribution: spec.trafficDistribution PreferClose or PreferSameZone ▶
 * PreferSameZone, PreferSameNode ▶ PreferSameNode; otherwise the annotation, case-insensitively,
 * with the same names; anything else ▶ undefined (any endpoint).
 */
export function convertTrafficDistribution(
  spec: string | undefined,
  annotation: string | undefined,
): TrafficDistribution | undefined {
  const fromSpec = trafficDistributions.get(spec ?? "");
  if (fromSpec) return fromSpec;
  return annotationDistributions.get((annotation ?? "").toLowerCase());
}

const trafficDistributions: ReadonlyMap<string, TrafficDistribution> = new Map([
  ["PreferClose", "PreferSameZone"],
  ["PreferSameZone", "PreferSameZone"],
  ["PreferSameNode", "PreferSameNode"],
]);

const annotationDistributions: ReadonlyMap<string, TrafficDistribution> = new Map(
  [...trafficDistributions].map(([k, v]) => [k.toLowerCase(), v]),
);

/**
 * The Service an EndpointSlice belongs to, from its `kubernetes.io/service-name` label;
 * undefined when the label is missing or empty (such a slice feeds no service).
 */
export function serviceNameOfSlice(slice: Pick<EndpointSlice, "metadata">): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name ? name : undefined;
}
