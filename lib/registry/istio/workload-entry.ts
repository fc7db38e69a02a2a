/**
 * WorkloadEntry (and a ServiceEntry's inline `endpoints`, which share its shape) ─▶ model
 * Endpoints, as Istio's serviceentry registry converts them (pilot/pkg/serviceregistry/serviceentry
 * conversion.go convertEndpoint and convertWorkloadEntryToWorkloadInstance). Pure.
 */

import type { Endpoint, Locality } from "../../model/index.ts";
import { child } from "../check.ts";
import { sortedRecord } from "../kube/canonical.ts";
import { augmentLabels, NETWORK_LABEL, spiffeId } from "../kube/endpoint-builder.ts";
import { LEGACY_LOCALITY_LABEL, parseLocality } from "../kube/node.ts";
import type { IstioConfig } from "./common.ts";
import { UNIX_ADDRESS_PREFIX } from "./validate-workload-entry.ts";

/** A validated WorkloadEntry spec (also the shape of a ServiceEntry endpoint). */
export interface WorkloadEntrySpec {
  address?: string;
  /** Service port name ▶ the port this workload serves it on. */
  ports?: Record<string, number>;
  labels?: Record<string, string>;
  network?: string;
  /** `region/zone/subzone`. */
  locality?: string;
  weight?: number;
  serviceAccount?: string;
}

/**
 * A stored WorkloadEntry: the shared envelope around a validated spec. `unhealthy` marks a Pod
 * taken as a workload while not ready (lib/ingest/kinds/pod-workloads.ts): its endpoints are UNHEALTHY.
 */
export type WorkloadEntryConfig = IstioConfig<WorkloadEntrySpec> & { unhealthy?: true };

/** The ServiceEntry port an endpoint is built for. */
export interface EndpointServicePort {
  name: string;
  number: number;
  targetPort?: number;
}

/** Label naming the endpoint's network (Istio label.TopologyNetwork, added by AugmentLabels). */
export { NETWORK_LABEL };

/** Where an endpoint's identity and labels come from. */
export interface EndpointContext {
  /** The namespace of the config that declares the workload (its service account lives there). */
  namespace: string;
  /** The cluster of the ServiceEntry registry (label topology.istio.io/cluster). */
  clusterId: string;
  trustDomain: string;
}

/**
 * A WorkloadEntry's labels as Istio selects on them (ConvertWorkloadEntry): the spec's labels with
 * the object's metadata labels over them. Sorted.
 */
export function workloadEntryLabels(we: WorkloadEntryConfig): Record<string, string> {
  return sortedRecord({ ...(we.spec.labels ?? {}), ...we.labels });
}

/**
 * Whether Istio can serve the address as an endpoint of this ServiceEntry: never a Unix socket or
 * an empty address (a workload behind its network's gateway), both unsupported here; a hostname
 * only for DNS resolution (Istio's DNSServiceEntryOnly).
 */
export function servableAddress(address: string, dnsResolution: boolean, isIp: boolean): boolean {
  if (address === "" || address.startsWith(UNIX_ADDRESS_PREFIX)) return false;
  return isIp || dnsResolution;
}

/**
 * The endpoint port for a service port: the workload's ports map entry for the port's name, else
 * the port's targetPort, else its number (Istio: "we.ports > se.port.targetPort > se.port.number").
 */
export function endpointPort(we: WorkloadEntrySpec, port: EndpointServicePort): number {
  const mapped = we.ports && Object.hasOwn(we.ports, port.name) ? (we.ports[port.name] as number) : 0;
  if (mapped > 0) return mapped;
  return port.targetPort !== undefined && port.targetPort > 0 ? port.targetPort : port.number;
}

/**
 * The locality of a workload: its `locality`, else its `istio-locality` label (dots for slashes,
 * as Kubernetes labels cannot hold "/"), split as `region/zone/subzone`.
 */
export function workloadLocality(we: WorkloadEntrySpec, labels: Readonly<Record<string, string>>): Locality {
  if (we.locality) return parseLocality(we.locality);
  const label = labels[LEGACY_LOCALITY_LABEL] ?? "";
  return parseLocality(label.includes("/") ? label : label.replaceAll(".", "/"));
}

/**
 * One model Endpoint for a workload and a service port (Istio convertEndpoint): address as given,
 * port by endpointPort, labels augmented as Istio's AugmentLabels does (locality, cluster and
 * network labels), locality, service account as the SPIFFE identity in `ctx.namespace`, `health`
 * (HEALTHY unless told), and weight and network (`network`, else the NETWORK_LABEL label) when set. `labels` are the workload's labels (see workloadEntryLabels).
 */
export function workloadEndpoint(
  we: WorkloadEntrySpec,
  labels: Readonly<Record<string, string>>,
  port: EndpointServicePort,
  ctx: EndpointContext,
  health: Endpoint["health"] = "HEALTHY",
): Endpoint {
  const locality = workloadLocality(we, labels);
  const augmented = augmentLabels(labels, locality, ctx.clusterId, "");
  // Istio's network callback: the entry's `network`, else its network label.
  const network = we.network || labels[NETWORK_LABEL] || "";
  const weight = we.weight ?? 0;
  return {
    address: we.address ?? "",
    port: endpointPort(we, port),
    servicePortName: port.name,
    labels: network === "" ? augmented : sortedRecord({ ...augmented, [NETWORK_LABEL]: network }),
    locality,
    serviceAccount: we.serviceAccount ? spiffeId(ctx.trustDomain, ctx.namespace, we.serviceAccount) : "",
    health,
    ...(weight > 0 && { weight }),
    ...(network !== "" && { network }),
  };
}

const workloadEntryFields = new Set([
  "address",
  "ports",
  "labels",
  "network",
  "locality",
  "weight",
  "serviceAccount",
]);

/**
 * The fields of a WorkloadEntry-shaped value that are accepted but not served, as paths under
 * `path`: a Unix socket or empty (network-only) address, and fields this version does not know.
 */
export function workloadShapeUnsupported(spec: Readonly<Record<string, unknown>>, path: string): string[] {
  const out: string[] = [];
  const address = typeof spec.address === "string" ? spec.address : "";
  if (address === "" || address.startsWith(UNIX_ADDRESS_PREFIX)) out.push(child(path, "address"));
  for (const key of Object.keys(spec)) if (!workloadEntryFields.has(key)) out.push(child(path, key));
  return out;
}

/** The fields of a WorkloadEntry spec accepted but not implemented, as `spec.<field>` paths. */
export function workloadEntryUnsupportedFields(spec: Readonly<Record<string, unknown>>): string[] {
  return workloadShapeUnsupported(spec, "spec");
}
