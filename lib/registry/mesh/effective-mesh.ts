/**
 * The effective mesh settings: Istio's MeshConfig defaults, overlaid by the stored MeshConfig
 * (the cluster's `istio` ConfigMap, keys.meshConfig()), overlaid by the environment variables the
 * host set explicitly (TRUST_DOMAIN, DISCOVERY_SELECTORS, EDGEPILOT_ENABLE_AUTO_MTLS). Pure but for
 * readEffectiveMesh, which reads the stored record once; every generator and ingest handler reads
 * the settings from here rather than from a process-level constant, so a stored change reaches them.
 */

import { sameJson } from "../../same-json.ts";
import { keys, type Store } from "../../store/index.ts";
import type { LabelSelector } from "../kube/records.ts";
import type { MeshConfigModel, OutboundTrafficMode, StoredMeshConfig } from "./mesh-config.ts";

/** Every implemented MeshConfig field resolved: what one push generates with. */
export interface EffectiveMesh {
  readonly trustDomain: string;
  readonly trustDomainAliases: readonly string[];
  readonly rootNamespace: string;
  /** Empty: every namespace is served. */
  readonly discoverySelectors: readonly LabelSelector[];
  readonly outboundTrafficPolicy: OutboundTrafficMode;
  readonly defaultServiceExportTo: readonly string[];
  readonly defaultVirtualServiceExportTo: readonly string[];
  readonly defaultDestinationRuleExportTo: readonly string[];
  readonly enableAutoMtls: boolean;
}

/** The mesh fields an environment variable may set; only the ones set explicitly are present. */
export interface MeshEnvOverrides {
  /** TRUST_DOMAIN. */
  trustDomain?: string;
  /** DISCOVERY_SELECTORS. */
  discoverySelectors?: readonly LabelSelector[];
  /** EDGEPILOT_ENABLE_AUTO_MTLS. */
  enableAutoMtls?: boolean;
}

/** The names of the MeshEnvOverrides fields, as a host lists the ones it set. */
export type MeshEnvField = keyof MeshEnvOverrides;

/** Istio's MeshConfig defaults (pkg/config/mesh DefaultMeshConfig) for the implemented fields. */
export const defaultMesh: EffectiveMesh = Object.freeze({
  trustDomain: "cluster.local",
  trustDomainAliases: [],
  rootNamespace: "istio-system",
  discoverySelectors: [],
  outboundTrafficPolicy: "ALLOW_ANY",
  defaultServiceExportTo: ["*"],
  defaultVirtualServiceExportTo: ["*"],
  defaultDestinationRuleExportTo: ["*"],
  enableAutoMtls: true,
});

/**
 * The effective settings: `env` (explicitly set variables) wins over `stored`, which wins over
 * Istio's defaults; a stored empty trustDomain or rootNamespace counts as not set (Istio fills both).
 */
export function effectiveMesh(
  stored: MeshConfigModel | undefined,
  env: MeshEnvOverrides = {},
): EffectiveMesh {
  const s = stored ?? {};
  const d = defaultMesh;
  return {
    trustDomain: env.trustDomain ?? (s.trustDomain || d.trustDomain),
    trustDomainAliases: s.trustDomainAliases ?? d.trustDomainAliases,
    rootNamespace: s.rootNamespace || d.rootNamespace,
    discoverySelectors: env.discoverySelectors ?? s.discoverySelectors ?? d.discoverySelectors,
    outboundTrafficPolicy: s.outboundTrafficPolicy?.mode ?? d.outboundTrafficPolicy,
    defaultServiceExportTo: nonEmpty(s.defaultServiceExportTo) ?? d.defaultServiceExportTo,
    defaultVirtualServiceExportTo:
      nonEmpty(s.defaultVirtualServiceExportTo) ?? d.defaultVirtualServiceExportTo,
    defaultDestinationRuleExportTo:
      nonEmpty(s.defaultDestinationRuleExportTo) ?? d.defaultDestinationRuleExportTo,
    enableAutoMtls: env.enableAutoMtls ?? s.enableAutoMtls ?? d.enableAutoMtls,
  };
}

/** Istio reads an empty default exportTo list as unset (public). */
function nonEmpty(list: readonly string[] | undefined): readonly string[] | undefined {
  return list && list.length > 0 ? list : undefined;
}

/** Whether two effective settings are equal: equal ones generate the same resources. */
export function sameMesh(a: EffectiveMesh, b: EffectiveMesh): boolean {
  return a === b || sameJson(canonical(a), canonical(b));
}

/** A fixed field order, so settings built by different paths compare as JSON. */
function canonical(m: EffectiveMesh): unknown[] {
  return [
    m.trustDomain,
    m.trustDomainAliases,
    m.rootNamespace,
    m.discoverySelectors,
    m.outboundTrafficPolicy,
    m.defaultServiceExportTo,
    m.defaultVirtualServiceExportTo,
    m.defaultDestinationRuleExportTo,
    m.enableAutoMtls,
  ];
}

/** Whether two override sets are equal (a context built with other overrides is not shared). */
export function sameOverrides(a: MeshEnvOverrides | undefined, b: MeshEnvOverrides | undefined): boolean {
  const o = (x: MeshEnvOverrides | undefined) => [x?.trustDomain, x?.discoverySelectors, x?.enableAutoMtls];
  return sameJson(o(a), o(b));
}

/** The effective settings over what the store holds now (one read of keys.meshConfig()). */
export async function readEffectiveMesh(store: Store, env: MeshEnvOverrides = {}): Promise<EffectiveMesh> {
  const stored = (await store.get<StoredMeshConfig>(keys.meshConfig()))?.value;
  return effectiveMesh(stored?.model, env);
}

/**
 * The overrides of a host's registry options: the fields named by `meshSet` (the variables its
 * environment set); without `meshSet` (a host built its options in code) every field given counts.
 */
export function meshOverrides(registry: {
  trustDomain?: string;
  discoverySelectors?: readonly LabelSelector[];
  enableAutoMtls?: boolean;
  meshSet?: readonly MeshEnvField[];
}): MeshEnvOverrides {
  const set = (f: MeshEnvField) => registry.meshSet === undefined || registry.meshSet.includes(f);
  return {
    ...(registry.trustDomain !== undefined && set("trustDomain") && { trustDomain: registry.trustDomain }),
    ...(registry.discoverySelectors !== undefined &&
      set("discoverySelectors") && { discoverySelectors: registry.discoverySelectors }),
    ...(registry.enableAutoMtls !== undefined &&
      set("enableAutoMtls") && { enableAutoMtls: registry.enableAutoMtls }),
  };
}
