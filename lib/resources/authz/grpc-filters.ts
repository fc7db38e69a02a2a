/**
 * A workload's AuthorizationPolicies ▶ the RBAC HTTP filters of a proxyless gRPC server's inbound
 * listener, as istiod's grpcgen (buildInboundFilterChain) names them: a DENY filter
 * `envoy.filters.http.rbac.DENY` then an ALLOW filter `envoy.filters.http.rbac`, policies named
 * `<ns>-<name>-<rule>`. gRPC enforces only ALLOW and DENY and only the matchers of gRFC A41 (it
 * treats metadata, uri_template and SNI matchers as never matching), so rules are generated for
 * the `grpc` target: a field gRPC cannot evaluate drops an ALLOW rule and widens a DENY rule, as
 * istiod does for TCP chains. Where grpcgen would let traffic through that the policy refuses, this
 * fails closed instead: an ALLOW policy without rules still yields an ALLOW filter (which denies),
 * and a CUSTOM policy (gRPC has no ext_authz) denies what it matches. AUDIT is not enforceable and
 * dry-run policies are left out (gRPC has no shadow rules). Pure.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { Policy } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import { RBACSchema } from "../../gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import {
  type HttpFilter,
  HttpFilterSchema,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { AuthorizationPolicyModel, WorkloadAuthorization } from "../../registry/istio/security.ts";
import { BAD_CUSTOM_SUFFIX, EXT_AUTHZ_PREFIX, HTTP_RBAC_FILTER } from "./envoy-filters.ts";
import { buildRuleSets, istioPolicyName, type PolicyNamer, rbacRules } from "./rule-sets.ts";
import type { TrustDomains } from "./trust-domain.ts";

/** The proxyless DENY filter's name (filter names in one chain must differ). */
export const GRPC_RBAC_DENY_FILTER = `${HTTP_RBAC_FILTER}.DENY`;

/** grpcgen's policy name: `<ns>-<name>-<rule>`. */
const grpcPolicyName: PolicyNamer = (p, i) => `${p.namespace}-${p.name}-${i}`;

/** What the proxyless authorization filters of one workload are built from. */
export interface GrpcAuthzOptions {
  policies: WorkloadAuthorization;
  trustDomains: TrustDomains;
}

const enforced = (list: readonly AuthorizationPolicyModel[]) => list.filter((p) => !p.dryRun);

function filter(name: string, action: "ALLOW" | "DENY", policies: ReadonlyMap<string, Policy>): HttpFilter {
  const rbac = create(RBACSchema, { rules: rbacRules(action, policies) });
  return create(HttpFilterSchema, {
    name,
    configType: { case: "typedConfig", value: anyPack(RBACSchema, rbac) },
  });
}

/**
 * The RBAC filters to put before the router of a proxyless gRPC server's inbound listener: the
 * DENY filter when a DENY or CUSTOM policy yields a rule, then the ALLOW filter when an ALLOW policy
 * applies. Empty when nothing selects the workload.
 */
export function buildGrpcAuthzFilters(options: GrpcAuthzOptions): HttpFilter[] {
  const { policies, trustDomains } = options;
  const deny = new Map<string, Policy>();
  for (const p of enforced(policies.custom)) {
    const prefix = p.provider ? `${EXT_AUTHZ_PREFIX}-${p.provider}-` : `${EXT_AUTHZ_PREFIX}-`;
    const sets = buildRuleSets([p], {
      action: "CUSTOM",
      target: "grpc",
      trustDomains,
      name: istioPolicyName(prefix),
    });
    for (const [name, policy] of sets.enforced ?? []) deny.set(name + BAD_CUSTOM_SUFFIX, policy);
  }
  const denySets = buildRuleSets(enforced(policies.deny), {
    action: "DENY",
    target: "grpc",
    trustDomains,
    name: grpcPolicyName,
  });
  for (const [name, policy] of denySets.enforced ?? []) deny.set(name, policy);
  const allow = enforced(policies.allow);
  const out: HttpFilter[] = [];
  if (deny.size > 0) out.push(filter(GRPC_RBAC_DENY_FILTER, "DENY", deny));
  if (allow.length > 0) {
    const sets = buildRuleSets(allow, {
      action: "ALLOW",
      target: "grpc",
      trustDomains,
      name: grpcPolicyName,
    });
    out.push(filter(HTTP_RBAC_FILTER, "ALLOW", sets.enforced ?? new Map()));
  }
  return out;
}
