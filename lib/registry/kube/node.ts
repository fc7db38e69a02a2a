/**
 * v1 Node ─▶ NodeInfo and the locality labels Istio reads off nodes and pods
 * (istio controller.go getPodLocality, pkg/model LocalityLabel, util/label AugmentLabels).
 */
import type { Locality } from "../../model/index.ts";
import type { NodeInfo } from "./records.ts";
import type { KubeNode } from "./types.ts";

/** Node label with the cloud region (Kubernetes GA topology label). */
export const TOPOLOGY_REGION_LABEL = "topology.kubernetes.io/region";
/** Node label with the availability zone (Kubernetes GA topology label). */
export const TOPOLOGY_ZONE_LABEL = "topology.kubernetes.io/zone";
/** Deprecated region label; Istio still reads it when the GA one is missing or empty. */
export const DEPRECATED_REGION_LABEL = "failure-domain.beta.kubernetes.io/region";
/** Deprecated zone label; Istio still reads it when the GA one is missing or empty. */
export const DEPRECATED_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone";
/** Node label with Istio's third locality level (label.TopologySubzone). */
export const TOPOLOGY_SUBZONE_LABEL = "topology.istio.io/subzone";
/** Pod label that pins a pod's locality, overriding its node's (label.TopologyLocality). */
export const TOPOLOGY_LOCALITY_LABEL = "topology.istio.io/locality";
/** The older pod locality label, read when topology.istio.io/locality is absent (model.LocalityLabel). */
export const LEGACY_LOCALITY_LABEL = "istio-locality";

/**
 * A node's locality: region and zone from the GA topology labels, else the deprecated
 * failure-domain.beta ones (as Istio's getLabelValue falls back), subzone from Istio's label.
 * Missing labels ▶ "". Pure.
 */
export function convertNode(obj: KubeNode): NodeInfo {
  const labels = obj.metadata.labels ?? {};
  return {
    name: obj.metadata.name,
    region: labels[TOPOLOGY_REGION_LABEL] || labels[DEPRECATED_REGION_LABEL] || "",
    zone: labels[TOPOLOGY_ZONE_LABEL] || labels[DEPRECATED_ZONE_LABEL] || "",
    subzone: labels[TOPOLOGY_SUBZONE_LABEL] || "",
  };
}

/**
 * The locality a pod's labels pin, or undefined when they pin none. As Istio's GetLocalityLabel:
 * `topology.istio.io/locality` when the key is present (even empty), else `istio-locality`; an
 * empty value pins nothing. Kubernetes label values cannot hold "/", so "." separates the parts
 * unless the value already has a "/" (SanitizeLocalityLabel).
 */
export function podLocality(labels: Readonly<Record<string, string>>): Locality | undefined {
  const value = Object.hasOwn(labels, TOPOLOGY_LOCALITY_LABEL)
    ? labels[TOPOLOGY_LOCALITY_LABEL]
    : labels[LEGACY_LOCALITY_LABEL];
  if (!value) return undefined;
  return parseLocality(value.includes("/") ? value : value.replaceAll(".", "/"));
}

/** Istio's SplitLocalityLabel: `region[/zone[/subzone]]`; parts past the third are dropped. */
export function parseLocality(label: string): Locality {
  const [region = "", zone = "", subzone = ""] = label.split("/");
  return { region, zone, subzone };
}
