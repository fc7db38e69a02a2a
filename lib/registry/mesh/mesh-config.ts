/**
 * The MeshConfig fields edgepilot implements (istio.io/api mesh/v1alpha1 config.proto), validated,
 * as the cluster's `istio` ConfigMap (key `mesh`) or MESH_CONFIG_FILE set them. A field absent
 * here was not set there: the environment's value or Istio's default applies. Stored under
 * keys.meshConfig() with the names of the fields that were set but are not implemented.
 */

import type { LabelSelector } from "../kube/records.ts";

/** outboundTrafficPolicy.mode. */
export type OutboundTrafficMode = "ALLOW_ANY" | "REGISTRY_ONLY";

/** The implemented MeshConfig fields, camelCase as Istio's JSON; absent = not set. */
export interface MeshConfigModel {
  trustDomain?: string;
  trustDomainAliases?: string[];
  rootNamespace?: string;
  discoverySelectors?: LabelSelector[];
  outboundTrafficPolicy?: { mode: OutboundTrafficMode };
  defaultServiceExportTo?: string[];
  defaultVirtualServiceExportTo?: string[];
  defaultDestinationRuleExportTo?: string[];
  enableAutoMtls?: boolean;
}

/** The record stored under keys.meshConfig(). */
export interface StoredMeshConfig {
  model: MeshConfigModel;
  /** MeshConfig fields that were set and are accepted but not implemented (top-level names, sorted). */
  unsupported: string[];
  /** `configmap:<cluster>/<ns>/<name>@<resourceVersion>` or `file:<path>`. */
  source: string;
}
