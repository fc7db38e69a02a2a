/**
 * A workload's AuthorizationPolicies ▶ the RBAC filters of an Envoy sidecar's inbound chain, as
 * istiod's authz builder (pilot/pkg/security/authz/builder BuildHTTP / BuildTCP): CUSTOM first,
 * then AUDIT (action LOG), DENY and ALLOW, one filter each; dry-run policies as shadow rules.
 * edgepilot's mesh config has no extension providers, so a CUSTOM policy takes istiod's path for an
 * unknown provider: its rules become a DENY filter, per provider, so traffic it should have sent to
 * the external authorizer is refused rather than let through. Pure; the listener builders place
 * the filters (HTTP: before the router; TCP: before tcp_proxy).
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { type Filter, FilterSchema } from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type RBAC, RBAC_Action } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import { RBACSchema as HttpRbacSchema } from "../../gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import {
  type HttpFilter,
  HttpFilterSchema,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { RBACSchema as NetworkRbacSchema } from "../../gen/envoy/extensions/filters/network/rbac/v3/rbac_pb.ts";
import type {
  AuthorizationPolicyModel,
  AuthzAction,
  WorkloadAuthorization,
} from "../../registry/istio/security.ts";
import { buildRuleSets, istioPolicyName, type RuleSets, rbacRules } from "./rule-sets.ts";
import type { TrustDomains } from "./trust-domain.ts";

/** The HTTP RBAC filter's name. */
export const HTTP_RBAC_FILTER = "envoy.filters.http.rbac";
/** The network RBAC filter's name. */
export const NETWORK_RBAC_FILTER = "envoy.filters.network.rbac";
/** The network RBAC filter's stat prefix (istiod's RBACTCPFilterStatPrefix). */
export const TCP_STAT_PREFIX = "tcp.";
/** Shadow-rule stat prefix of dry-run ALLOW policies (and of a filter without shadow rules, as istiod writes it). */
export const DRY_RUN_ALLOW_PREFIX = "istio_dry_run_allow_";
/** Shadow-rule stat prefix of dry-run DENY policies. */
export const DRY_RUN_DENY_PREFIX = "istio_dry_run_deny_";
/** Prefix of CUSTOM policy names (istiod's extAuthzMatchPrefix). */
export const EXT_AUTHZ_PREFIX = "istio-ext-authz";
/** Suffix of a CUSTOM policy turned into a DENY because its provider is unknown. */
export const BAD_CUSTOM_SUFFIX = "-deny-due-to-bad-CUSTOM-action";

/** What the Envoy authorization filters of one workload are built from. */
export interface EnvoyAuthzOptions {
  /** The AuthorizationPolicies selecting the workload (SecurityPolicies.authorizationFor). */
  policies: WorkloadAuthorization;
  /** The mesh's trust domain first, then its aliases. */
  trustDomains: TrustDomains;
}

/** One filter's rule sets, in the shape both the HTTP and the network RBAC configs take. */
interface RbacConfig {
  rules?: RBAC;
  shadowRules?: RBAC;
  shadowRulesStatPrefix: string;
}

/** istiod's shadowRuleStatPrefix: by the shadow set's action; an absent set reads as ALLOW. */
const shadowPrefix = (shadow: RBAC | undefined) =>
  (shadow?.action ?? RBAC_Action.ALLOW) === RBAC_Action.ALLOW
    ? DRY_RUN_ALLOW_PREFIX
    : shadow?.action === RBAC_Action.DENY
      ? DRY_RUN_DENY_PREFIX
      : "";

/** The configs of the local actions (AUDIT, DENY, ALLOW, in istiod's order), one per action with policies. */
function localConfigs(options: EnvoyAuthzOptions, tcp: boolean): RbacConfig[] {
  const { policies, trustDomains } = options;
  const target = tcp ? "tcp" : "http";
  const steps: [readonly AuthorizationPolicyModel[], AuthzAction, "LOG" | "DENY" | "ALLOW"][] = [
    [policies.audit, "AUDIT", "LOG"],
    [policies.deny, "DENY", "DENY"],
    [policies.allow, "ALLOW", "ALLOW"],
  ];
  const out: RbacConfig[] = [];
  for (const [list, action, rbacAction] of steps) {
    if (list.length === 0) continue;
    const sets: RuleSets = buildRuleSets(list, { action, target, trustDomains, name: istioPolicyName() });
    const rules = sets.enforced && rbacRules(rbacAction, sets.enforced);
    const shadowRules = sets.shadow && rbacRules(rbacAction, sets.shadow);
    out.push({ rules, shadowRules, shadowRulesStatPrefix: shadowPrefix(shadowRules) });
  }
  return out;
}

/**
 * The CUSTOM configs: per provider (in name order), a DENY of its enforced rules renamed with
 * BAD_CUSTOM_SUFFIX, as istiod builds for a provider the mesh config does not define. Dry-run
 * CUSTOM policies enforce nothing. Values the chain cannot evaluate are dropped (the DENY widens).
 */
function customConfigs(options: EnvoyAuthzOptions, tcp: boolean): RbacConfig[] {
  const byProvider = new Map<string, AuthorizationPolicyModel[]>();
  for (const p of options.policies.custom) {
    const provider = p.provider ?? "";
    byProvider.set(provider, [...(byProvider.get(provider) ?? []), p]);
  }
  return [...byProvider.keys()].sort().map((provider) => {
    const prefix = provider === "" ? `${EXT_AUTHZ_PREFIX}-` : `${EXT_AUTHZ_PREFIX}-${provider}-`;
    const sets = buildRuleSets(byProvider.get(provider) ?? [], {
      action: "CUSTOM",
      target: tcp ? "tcp" : "http",
      trustDomains: options.trustDomains,
      name: istioPolicyName(prefix),
    });
    const denied = new Map(
      [...(sets.enforced ?? [])].map(([name, policy]) => [name + BAD_CUSTOM_SUFFIX, policy]),
    );
    return { rules: rbacRules("DENY", denied), shadowRulesStatPrefix: "" };
  });
}

/**
 * The HTTP filters of the workload's inbound HTTP chain: CUSTOM's, then AUDIT's, DENY's and ALLOW's
 * (each `envoy.filters.http.rbac`). Empty when no policy selects the workload: no policy, no check.
 */
export function buildHttpAuthzFilters(options: EnvoyAuthzOptions): HttpFilter[] {
  return [...customConfigs(options, false), ...localConfigs(options, false)].map((c) =>
    create(HttpFilterSchema, {
      name: HTTP_RBAC_FILTER,
      configType: { case: "typedConfig", value: anyPack(HttpRbacSchema, create(HttpRbacSchema, c)) },
    }),
  );
}

/**
 * The network filters of the workload's inbound TCP chain, in the same order (each
 * `envoy.filters.network.rbac`, stat prefix `tcp.`): an ALLOW rule naming HTTP-only fields is left
 * out (it allows nothing here), a DENY or AUDIT rule keeps its other fields.
 */
export function buildNetworkAuthzFilters(options: EnvoyAuthzOptions): Filter[] {
  return [...customConfigs(options, true), ...localConfigs(options, true)].map((c) =>
    create(FilterSchema, {
      name: NETWORK_RBAC_FILTER,
      configType: {
        case: "typedConfig",
        value: anyPack(NetworkRbacSchema, create(NetworkRbacSchema, { ...c, statPrefix: TCP_STAT_PREFIX })),
      },
    }),
  );
}
