/**
 * One AuthorizationPolicy rule ▶ one Envoy RBAC Policy, as istiod's authz/model (New, Generate):
 * every `from` is a principal and every `to` a permission, each the AND of its fields' matches
 * (values OR-ed, `not*` values under a NOT), the `when` conditions AND-ed onto every one of them.
 * Fail closed: an ALLOW rule with a field the target cannot enforce generates nothing (the rule
 * allows less); a DENY or AUDIT rule drops just that value and keeps the rest (it denies more). Pure.
 */

import { create } from "@bufbuild/protobuf";
import type { Permission, Policy, Principal } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import { PolicySchema } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import type { AuthzAction, AuthzRule } from "../../registry/istio/security.ts";
import {
  type AttributeGenerator,
  type AuthzTarget,
  generators,
  serviceAccountGenerator,
} from "./attributes.ts";
import * as n from "./rbac-nodes.ts";
import { expandTrustDomainAliases, replaceTrustDomainAliases, type TrustDomains } from "./trust-domain.ts";

/** One attribute of a rule with its values. */
interface Condition {
  key: string;
  values: readonly string[];
  notValues: readonly string[];
  g: AttributeGenerator;
}

const cond = (
  key: string,
  g: AttributeGenerator,
  values: readonly string[] | undefined,
  notValues: readonly string[] | undefined,
): Condition[] =>
  (values?.length ?? 0) + (notValues?.length ?? 0) > 0
    ? [{ key, g, values: values ?? [], notValues: notValues ?? [] }]
    : [];

/** The generator of a `when` key, or undefined for a key istiod does not know. */
function whenGenerator(key: string, namespace: string): AttributeGenerator | undefined {
  switch (key) {
    case "destination.ip":
      return generators.destinationIp;
    case "destination.port":
      return generators.destinationPort;
    case "connection.sni":
      return generators.connectionSni;
    case "source.ip":
      return generators.sourceIp;
    case "remote.ip":
      return generators.remoteIp;
    case "source.namespace":
      return generators.sourceNamespace;
    case "source.trustDomain":
      return generators.sourceTrustDomain;
    case "source.serviceAccount":
      return serviceAccountGenerator(namespace);
    case "source.principal":
      return generators.sourcePrincipal;
    case "request.auth.principal":
      return generators.requestPrincipal;
    case "request.auth.audiences":
      return generators.requestAudiences;
    case "request.auth.presenter":
      return generators.requestPresenter;
  }
  if (key.startsWith("experimental.envoy.filters.")) return generators.envoyFilter;
  if (key.startsWith("request.headers")) return generators.requestHeader;
  if (key.startsWith("request.auth.claims")) return generators.requestClaims;
  return undefined;
}

/** A rule as lists of conditions: one principal list per `from`, one permission list per `to`. */
export interface RuleModel {
  principals: Condition[][];
  permissions: Condition[][];
}

/** The model of `rule` of a policy in `namespace`, or an Error for a `when` key istiod does not know. */
export function ruleModel(rule: AuthzRule, namespace: string, domains: TrustDomains): RuleModel | Error {
  const basePrincipal: Condition[] = [];
  const basePermission: Condition[] = [];
  for (const w of rule.when ?? []) {
    const g = whenGenerator(w.key, namespace);
    if (!g) return new Error(`unknown attribute ${w.key}`);
    (g.side === "permission" ? basePermission : basePrincipal).push(...cond(w.key, g, w.values, w.notValues));
  }
  const principals = (rule.from ?? []).map(({ source: s }) => [
    ...cond("source.principal", generators.sourcePrincipal, s?.principals, s?.notPrincipals),
    ...cond(
      "request.auth.principal",
      generators.requestPrincipal,
      s?.requestPrincipals,
      s?.notRequestPrincipals,
    ),
    ...cond(
      "source.serviceAccount",
      serviceAccountGenerator(namespace),
      s?.serviceAccounts,
      s?.notServiceAccounts,
    ),
    ...cond("source.trustDomain", generators.sourceTrustDomain, s?.trustDomains, s?.notTrustDomains),
    ...cond("source.namespace", generators.sourceNamespace, s?.namespaces, s?.notNamespaces),
    ...cond("remote.ip", generators.remoteIp, s?.remoteIpBlocks, s?.notRemoteIpBlocks),
    ...cond("source.ip", generators.sourceIp, s?.ipBlocks, s?.notIpBlocks),
    ...basePrincipal,
  ]);
  const permissions = (rule.to ?? []).map(({ operation: o }) => [
    ...cond(":authority", generators.host, o?.hosts, o?.notHosts),
    ...cond(":method", generators.method, o?.methods, o?.notMethods),
    ...cond("path-matcher", generators.path, o?.paths, o?.notPaths),
    ...cond("destination.port", generators.destinationPort, o?.ports, o?.notPorts),
    ...basePermission,
  ]);
  return {
    principals: (principals.length > 0 ? principals : [basePrincipal]).map((l) =>
      l.map((c) => migrate(c, domains)),
    ),
    permissions: permissions.length > 0 ? permissions : [basePermission],
  };
}

/** istiod's MigrateTrustDomain: principals and trust domains cover the mesh's trust-domain aliases. */
function migrate(c: Condition, domains: TrustDomains): Condition {
  const f =
    c.key === "source.principal"
      ? replaceTrustDomainAliases
      : c.key === "source.trustDomain"
        ? expandTrustDomainAliases
        : undefined;
  if (!f) return c;
  return {
    ...c,
    values: c.values.length ? f(domains, c.values) : [],
    notValues: c.notValues.length ? f(domains, c.notValues) : [],
  };
}

/**
 * The matches of one condition: the OR of its values, then NOT(OR of its not-values). An Error
 * fails the whole rule for ALLOW; for DENY and AUDIT the value is left out (istiod's checkError).
 */
function matches<T extends Permission | Principal>(
  c: Condition,
  target: AuthzTarget,
  action: AuthzAction,
  or: (xs: T[]) => T,
  not: (x: T) => T,
): T[] | Error {
  const out: T[] = [];
  for (const [values, negate] of [
    [c.values, false],
    [c.notValues, true],
  ] as const) {
    if (values.length === 0) continue;
    const g = c.g;
    const extended = "all" in g;
    const results = extended ? [g.all(c.key, values, target)] : values.map((v) => g.one(c.key, v, target));
    const built: T[] = [];
    for (const r of results) {
      if (r instanceof Error) {
        if (action === "ALLOW") return r;
        continue;
      }
      built.push(r as T);
    }
    if (built.length === 0) continue;
    // An extended generator already combined its values into one match.
    const joined = extended ? (built[0] as T) : or(built);
    out.push(negate ? not(joined) : joined);
  }
  return out;
}

/** The RBAC Policy of a rule model for `target`, or an Error when an ALLOW rule cannot be enforced there. */
export function generatePolicy(m: RuleModel, target: AuthzTarget, action: AuthzAction): Policy | Error {
  const permissions: Permission[] = [];
  for (const list of m.permissions) {
    const and: Permission[] = [];
    for (const c of list) {
      const r = matches<Permission>(c, target, action, n.permissionOr, n.permissionNot);
      if (r instanceof Error) return r;
      and.push(...r);
    }
    permissions.push(n.permissionAnd(and.length > 0 ? and : [n.permissionAny()]));
  }
  const principals: Principal[] = [];
  for (const list of m.principals) {
    const and: Principal[] = [];
    for (const c of list) {
      const r = matches<Principal>(c, target, action, n.principalOr, n.principalNot);
      if (r instanceof Error) return r;
      and.push(...r);
    }
    principals.push(n.principalAnd(and.length > 0 ? and : [n.principalAny()]));
  }
  return create(PolicySchema, { permissions, principals });
}
