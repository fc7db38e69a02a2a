/**
 * security.istio.io policies as generation reads them: PeerAuthentication and AuthorizationPolicy
 * models (their validated specs, camelCase as the API serves them) and the index that answers, for
 * one workload, which policies apply, as istiod's PushContext does
 * (pilot/pkg/model/authentication.go getConfigsForWorkload, pilot/pkg/security/authn
 * ComposePeerAuthentication, pilot/pkg/model/authorization.go ListAuthorizationPolicies). Pure.
 */

import { byCreation, type ConfigMeta } from "./config-meta.ts";

/** PeerAuthentication's mutual TLS mode; UNSET inherits from the wider scope. */
export type MtlsMode = "UNSET" | "DISABLE" | "PERMISSIVE" | "STRICT";

/** A PeerAuthentication (security.istio.io v1 / v1beta1), validated. */
export interface PeerAuthenticationModel extends ConfigMeta {
  /** selector.matchLabels; absent or empty: the namespace (or, in the root namespace, the mesh). */
  selector?: Readonly<Record<string, string>>;
  /** mtls.mode; absent: UNSET. */
  mode: MtlsMode;
  /** portLevelMtls by workload (target) port; only honoured on a workload-level policy. */
  portLevelMtls?: Readonly<Record<number, MtlsMode>>;
}

/** AuthorizationPolicy's action (absent in the spec: ALLOW). */
export type AuthzAction = "ALLOW" | "DENY" | "AUDIT" | "CUSTOM";

/** rule.from[].source, as the spec has it. */
export interface AuthzSource {
  principals?: readonly string[];
  notPrincipals?: readonly string[];
  requestPrincipals?: readonly string[];
  notRequestPrincipals?: readonly string[];
  namespaces?: readonly string[];
  notNamespaces?: readonly string[];
  ipBlocks?: readonly string[];
  notIpBlocks?: readonly string[];
  remoteIpBlocks?: readonly string[];
  notRemoteIpBlocks?: readonly string[];
  /** `sa` or `ns/sa` (never with principals or namespaces in one source). */
  serviceAccounts?: readonly string[];
  notServiceAccounts?: readonly string[];
  trustDomains?: readonly string[];
  notTrustDomains?: readonly string[];
}

/** rule.to[].operation, as the spec has it. */
export interface AuthzOperation {
  hosts?: readonly string[];
  notHosts?: readonly string[];
  ports?: readonly string[];
  notPorts?: readonly string[];
  methods?: readonly string[];
  notMethods?: readonly string[];
  paths?: readonly string[];
  notPaths?: readonly string[];
}

/** rule.when[]. */
export interface AuthzCondition {
  key: string;
  values?: readonly string[];
  notValues?: readonly string[];
}

/** One rule: every present part must match (from: any source; to: any operation; when: all). */
export interface AuthzRule {
  from?: readonly { source: AuthzSource }[];
  to?: readonly { operation: AuthzOperation }[];
  when?: readonly AuthzCondition[];
}

/** An AuthorizationPolicy (security.istio.io v1 / v1beta1), validated. */
export interface AuthorizationPolicyModel extends ConfigMeta {
  selector?: Readonly<Record<string, string>>;
  /** targetRef / targetRefs given: the policy attaches to gateways and waypoints only, never to a sidecar. */
  targeted?: boolean;
  action: AuthzAction;
  /** provider.name of a CUSTOM policy. */
  provider?: string;
  /** The `istio.io/dry-run: "true"` annotation: evaluated as shadow rules, never enforced. */
  dryRun?: boolean;
  /** Absent: the policy has no rules (an ALLOW then matches nothing; a DENY denies nothing). */
  rules: readonly AuthzRule[];
}

/** The mTLS a workload's inbound side takes: a mode, and per target port where a workload policy says. */
export interface MergedPeerAuthentication {
  mode: Exclude<MtlsMode, "UNSET">;
  perPort?: Readonly<Record<number, Exclude<MtlsMode, "UNSET">>>;
}

/** The AuthorizationPolicies that apply to one workload, by action, each list oldest first. */
export interface WorkloadAuthorization {
  custom: readonly AuthorizationPolicyModel[];
  deny: readonly AuthorizationPolicyModel[];
  allow: readonly AuthorizationPolicyModel[];
  audit: readonly AuthorizationPolicyModel[];
}

/** A workload as policies select it: its namespace and labels. */
export interface PolicyWorkload {
  namespace: string;
  labels: Readonly<Record<string, string>>;
}

/** The policies of one push, answering per workload. */
export interface SecurityPolicies {
  readonly rootNamespace: string;
  /** Every PeerAuthentication, oldest first. */
  readonly peerAuthentications: readonly PeerAuthenticationModel[];
  /** Every AuthorizationPolicy, oldest first. */
  readonly authorizationPolicies: readonly AuthorizationPolicyModel[];
  /** The workload's effective mTLS (PERMISSIVE when no policy applies). */
  mtlsFor(workload: PolicyWorkload): MergedPeerAuthentication;
  /** The mode on one target port of the workload. */
  mtlsForPort(workload: PolicyWorkload, port: number): Exclude<MtlsMode, "UNSET">;
  /** The AuthorizationPolicies that apply to the workload. */
  authorizationFor(workload: PolicyWorkload): WorkloadAuthorization;
}

const selects = (selector: Readonly<Record<string, string>> | undefined, labels: PolicyWorkload["labels"]) =>
  !selector || Object.entries(selector).every(([k, v]) => labels[k] === v);

const hasSelector = (s: Readonly<Record<string, string>> | undefined) => !!s && Object.keys(s).length > 0;

/** The mode `mode` resolves to under `parent` (UNSET inherits). */
const inherit = (mode: MtlsMode, parent: Exclude<MtlsMode, "UNSET">) => (mode === "UNSET" ? parent : mode);

/**
 * The effective mTLS of a workload from the PeerAuthentications of its namespace and the root
 * namespace (istiod's ComposePeerAuthentication): the narrowest scope wins (workload ▶ namespace ▶
 * mesh), the oldest within a scope; UNSET inherits; port-level modes come from the workload policy.
 * A policy with a selector in the root namespace applies to no workload.
 */
export function composePeerAuthentication(
  policies: readonly PeerAuthenticationModel[],
  workload: PolicyWorkload,
  rootNamespace: string,
): MergedPeerAuthentication {
  let mesh: PeerAuthenticationModel | undefined;
  let namespace: PeerAuthenticationModel | undefined;
  let workloadLevel: PeerAuthenticationModel | undefined;
  const older = (a: PeerAuthenticationModel, b: PeerAuthenticationModel | undefined) =>
    b === undefined || byCreation(a, b) < 0;
  for (const p of policies) {
    if (p.namespace !== workload.namespace && p.namespace !== rootNamespace) continue;
    if (!hasSelector(p.selector)) {
      if (p.namespace === rootNamespace) {
        if (older(p, mesh)) mesh = p;
      } else if (older(p, namespace)) namespace = p;
    } else if (p.namespace !== rootNamespace && selects(p.selector, workload.labels)) {
      if (older(p, workloadLevel)) workloadLevel = p;
    }
  }
  let mode: Exclude<MtlsMode, "UNSET"> = "PERMISSIVE";
  for (const p of [mesh, namespace, workloadLevel]) if (p) mode = inherit(p.mode, mode);
  if (!workloadLevel?.portLevelMtls) return { mode };
  const perPort: Record<number, Exclude<MtlsMode, "UNSET">> = {};
  for (const [port, m] of Object.entries(workloadLevel.portLevelMtls))
    perPort[Number(port)] = inherit(m, mode);
  return { mode, perPort };
}

/**
 * The AuthorizationPolicies of a workload (istiod's ListAuthorizationPolicies for a sidecar or a
 * proxyless workload): those of the root namespace and of its namespace whose selector its labels
 * satisfy (none: all of them); a policy with targetRefs attaches to no sidecar.
 */
export function authorizationFor(
  policies: readonly AuthorizationPolicyModel[],
  workload: PolicyWorkload,
  rootNamespace: string,
): WorkloadAuthorization {
  const out = { custom: [], deny: [], allow: [], audit: [] } as {
    [K in keyof WorkloadAuthorization]: AuthorizationPolicyModel[];
  };
  for (const p of policies) {
    if (p.namespace !== workload.namespace && p.namespace !== rootNamespace) continue;
    if (p.targeted || !selects(p.selector, workload.labels)) continue;
    out[p.action.toLowerCase() as keyof WorkloadAuthorization].push(p);
  }
  return out;
}

/** The index of one push's policies (each list sorted oldest first here). */
export function createSecurityPolicies(
  peerAuthentications: readonly PeerAuthenticationModel[],
  authorizationPolicies: readonly AuthorizationPolicyModel[],
  rootNamespace: string,
): SecurityPolicies {
  const peers = [...peerAuthentications].sort(byCreation);
  const authz = [...authorizationPolicies].sort(byCreation);
  return {
    rootNamespace,
    peerAuthentications: peers,
    authorizationPolicies: authz,
    mtlsFor: (w) => composePeerAuthentication(peers, w, rootNamespace),
    mtlsForPort(w, port) {
      const merged = composePeerAuthentication(peers, w, rootNamespace);
      return merged.perPort?.[port] ?? merged.mode;
    },
    authorizationFor: (w) => authorizationFor(authz, w, rootNamespace),
  };
}

const modes: readonly MtlsMode[] = ["UNSET", "DISABLE", "PERMISSIVE", "STRICT"];
const modeOf = (v: unknown): MtlsMode => (modes.includes(v as MtlsMode) ? (v as MtlsMode) : "UNSET");
const objectOf = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const matchLabelsOf = (selector: unknown): Record<string, string> | undefined => {
  const m = objectOf(objectOf(selector).matchLabels);
  return Object.keys(m).length > 0 ? (m as Record<string, string>) : undefined;
};

/** The model of a validated PeerAuthentication spec. */
export function toPeerAuthentication(meta: ConfigMeta, spec: unknown): PeerAuthenticationModel {
  const s = objectOf(spec);
  const selector = matchLabelsOf(s.selector);
  const ports = Object.entries(objectOf(s.portLevelMtls));
  const portLevelMtls: Record<number, MtlsMode> = {};
  for (const [port, mtls] of ports) portLevelMtls[Number(port)] = modeOf(objectOf(mtls).mode);
  return {
    ...meta,
    ...(selector && { selector }),
    mode: modeOf(objectOf(s.mtls).mode),
    ...(ports.length > 0 && { portLevelMtls }),
  };
}

/** The model of a validated AuthorizationPolicy spec (action absent: ALLOW; rules absent: none). */
export function toAuthorizationPolicy(
  meta: ConfigMeta,
  spec: unknown,
  dryRun = false,
): AuthorizationPolicyModel {
  const s = objectOf(spec);
  const selector = matchLabelsOf(s.selector);
  const targeted = s.targetRef !== undefined || (Array.isArray(s.targetRefs) && s.targetRefs.length > 0);
  const action = (["ALLOW", "DENY", "AUDIT", "CUSTOM"] as const).find((a) => a === s.action) ?? "ALLOW";
  const provider = objectOf(s.provider).name;
  return {
    ...meta,
    ...(selector && { selector }),
    ...(targeted && { targeted }),
    action,
    ...(typeof provider === "string" && { provider }),
    ...(dryRun && { dryRun }),
    rules: Array.isArray(s.rules) ? (s.rules as AuthzRule[]).map((r) => r ?? {}) : [],
  };
}
