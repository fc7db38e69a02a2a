/**
 * Security policy builders for sidecar generator tests: PeerAuthentications and
 * AuthorizationPolicies with overrides, indexed as the push context holds them.
 */
import {
  type AuthorizationPolicyModel,
  createSecurityPolicies,
  type MtlsMode,
  type PeerAuthenticationModel,
  type SecurityPolicies,
} from "../../../../lib/registry/istio/security.ts";

export const ROOT = "istio-system";

/** A PeerAuthentication; default: mesh-wide (root namespace, no selector) PERMISSIVE. */
export function peer(o: Partial<PeerAuthenticationModel> = {}): PeerAuthenticationModel {
  return { name: "default", namespace: ROOT, mode: "PERMISSIVE", ...o };
}

/** An AuthorizationPolicy; default: an ALLOW without rules in the default namespace. */
export function authz(o: Partial<AuthorizationPolicyModel> = {}): AuthorizationPolicyModel {
  return { name: "allow-nothing", namespace: "default", action: "ALLOW", rules: [], ...o };
}

/** The index of `peers` and `policies` under the root namespace istio-system. */
export function policies(
  peers: readonly PeerAuthenticationModel[],
  authzs: readonly AuthorizationPolicyModel[] = [],
): SecurityPolicies {
  return createSecurityPolicies(peers, authzs, ROOT);
}

/** A mesh whose one mesh-wide PeerAuthentication says `mode`. */
export function meshWide(mode: MtlsMode): SecurityPolicies {
  return policies([peer({ mode })]);
}
