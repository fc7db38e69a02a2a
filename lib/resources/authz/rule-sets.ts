/**
 * The policies of one action ▶ the RBAC rule sets of one filter, as istiod's authz builder
 * (Builder.build): each rule of each policy becomes one named Policy in the enforced set, or in the
 * shadow set when the policy is a dry run; a policy without rules contributes a policy that never
 * matches, so an ALLOW policy with no rules still denies. Pure.
 */
import { create } from "@bufbuild/protobuf";
import { type Policy, type RBAC, RBAC_Action, RBACSchema } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import type { AuthorizationPolicyModel, AuthzAction } from "../../registry/istio/security.ts";
import type { AuthzTarget } from "./attributes.ts";
import { generatePolicy, ruleModel } from "./policy-model.ts";
import { policyMatchNever } from "./rbac-nodes.ts";
import type { TrustDomains } from "./trust-domain.ts";

/** Names the RBAC policy of rule `index` of a policy. */
export type PolicyNamer = (policy: AuthorizationPolicyModel, index: number) => string;

/** istiod's policy name: `ns[<ns>]-policy[<name>]-rule[<i>]`, under a prefix for CUSTOM. */
export const istioPolicyName =
  (prefix = ""): PolicyNamer =>
  (p, i) =>
    `${prefix}ns[${p.namespace}]-policy[${p.name}]-rule[${i}]`;

/** The enforced and dry-run policies of one action, by name; a set is absent when no policy fed it. */
export interface RuleSets {
  enforced?: Map<string, Policy>;
  shadow?: Map<string, Policy>;
}

/** How the rules of `action` are generated: the RBAC action's fail-closed side and where they run. */
export interface RuleSetOptions {
  /** ALLOW fails closed by dropping a rule; anything else (DENY, AUDIT, CUSTOM) by dropping a value. */
  action: AuthzAction;
  target: AuthzTarget;
  trustDomains: TrustDomains;
  name: PolicyNamer;
}

/** The rule sets of `policies` (oldest first), each rule named by `options.name`. */
export function buildRuleSets(
  policies: readonly AuthorizationPolicyModel[],
  options: RuleSetOptions,
): RuleSets {
  const out: RuleSets = {};
  for (const p of policies) {
    const key = p.dryRun ? "shadow" : "enforced";
    const set = out[key] ?? new Map<string, Policy>();
    out[key] = set;
    p.rules.forEach((rule, i) => {
      const m = ruleModel(rule, p.namespace, options.trustDomains);
      if (m instanceof Error) return;
      const policy = generatePolicy(m, options.target, options.action);
      if (!(policy instanceof Error)) set.set(options.name(p, i), policy);
    });
    if (p.rules.length === 0) set.set(options.name(p, 0), policyMatchNever());
  }
  return out;
}

const rbacActions = { ALLOW: RBAC_Action.ALLOW, DENY: RBAC_Action.DENY, LOG: RBAC_Action.LOG } as const;

/** An RBAC rule set message, its policies in name order (as Go's deterministic map encoding). */
export function rbacRules(action: keyof typeof rbacActions, policies: ReadonlyMap<string, Policy>): RBAC {
  const sorted: Record<string, Policy> = {};
  for (const name of [...policies.keys()].sort()) sorted[name] = policies.get(name) as Policy;
  return create(RBACSchema, { action: rbacActions[action], policies: sorted });
}
