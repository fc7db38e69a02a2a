/**
 * What a sidecar snapshot takes from the mesh: the generators' settings under a push context's
 * effective mesh, and how a workload's AuthorizationPolicies become its inbound RBAC filters.
 */
import type { WorkloadAuthorization } from "../registry/istio/security.ts";
import type { EffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import { buildHttpAuthzFilters, buildNetworkAuthzFilters } from "../resources/authz/index.ts";
import {
  defaultTrustDomain,
  type InboundAuthz,
  type SidecarMeshSettings,
} from "../resources/generators/sidecar/types.ts";

/**
 * Builds the RBAC filters of a workload's AuthorizationPolicies for its inbound chains
 * (lib/resources/authz/); undefined: none.
 */
export type InboundAuthzBuilder = (
  policies: WorkloadAuthorization,
  mesh: SidecarMeshSettings,
) => InboundAuthz | undefined;

/** istiod's authz builder for a sidecar's inbound chains: RBAC HTTP and network filters, none when no policy selects it. */
export const envoyInboundAuthz: InboundAuthzBuilder = (policies, mesh) => {
  const options = {
    policies,
    trustDomains: [mesh.trustDomain ?? defaultTrustDomain, ...(mesh.trustDomainAliases ?? [])] as const,
  };
  return { http: buildHttpAuthzFilters(options), tcp: buildNetworkAuthzFilters(options) };
};

/** The sidecar generators' settings under one context's effective mesh (`base` for what MeshConfig does not set). */
export function sidecarMeshOf(base: SidecarMeshSettings, mesh: EffectiveMesh): SidecarMeshSettings {
  return {
    ...base,
    rootNamespace: mesh.rootNamespace,
    outboundTrafficPolicy: mesh.outboundTrafficPolicy,
    enableAutoMtls: mesh.enableAutoMtls,
    trustDomain: mesh.trustDomain,
    trustDomainAliases: mesh.trustDomainAliases,
  };
}
