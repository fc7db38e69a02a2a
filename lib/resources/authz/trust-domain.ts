/**
 * Trust-domain handling of source principals, as istiod's trustdomain.Bundle: a principal
 * `<td>/ns/<ns>/sa/<sa>` written for the local trust domain, one of its aliases or the placeholder
 * `cluster.local` matches the identity under every one of them, so a mesh can rename its trust
 * domain without rewriting its policies. Pure.
 */

/** The mesh's trust domain first, then its aliases. */
export type TrustDomains = readonly [string, ...string[]];

/** The trust domain a policy's `cluster.local` principals stand for (istiod's DefaultClusterLocalDomain). */
const CLUSTER_LOCAL = "cluster.local";

const spiffeParts = (principal: string) => principal.split("/");

/** Whether `principal` names a trust domain (five `/` parts and not the `*` wildcard domain). */
const enforcesTrustDomain = (principal: string) => {
  const parts = spiffeParts(principal);
  return parts.length === 5 && parts[0] !== "*";
};

/** istiod's suffixMatch: `pattern` is `*x` and `a` ends in x. */
const suffixMatch = (a: string, pattern: string) => pattern.startsWith("*") && a.endsWith(pattern.slice(1));
/** istiod's prefixMatch: `pattern` is `x*` and `a` starts with x. */
const prefixMatch = (a: string, pattern: string) =>
  pattern.endsWith("*") && a.startsWith(pattern.slice(0, -1));
/** istiod's stringMatch: `a` matches an entry of `list`, the wildcard on either side. */
const stringMatch = (a: string, list: readonly string[]) =>
  list.some(
    (s) =>
      a === s ||
      s === "*" ||
      prefixMatch(a, s) ||
      prefixMatch(s, a) ||
      suffixMatch(a, s) ||
      suffixMatch(s, a),
  );

/**
 * istiod's ReplaceTrustDomainAliases: each principal of a known trust domain (or `cluster.local`)
 * becomes one principal per trust domain of the bundle, duplicates dropped; any other principal
 * (no trust domain, a `*` domain, a foreign one) stays as written.
 */
export function replaceTrustDomainAliases(domains: TrustDomains, principals: readonly string[]): string[] {
  const out: string[] = [];
  for (const principal of principals) {
    if (!enforcesTrustDomain(principal)) {
      out.push(principal);
      continue;
    }
    const parts = spiffeParts(principal);
    const from = parts[0] as string;
    if (!stringMatch(from, domains) && from !== CLUSTER_LOCAL) {
      out.push(principal);
      continue;
    }
    const rewritten: string[] = [];
    for (const td of domains) {
      const p = suffixMatch(td, from) ? principal : [td, ...parts.slice(1)].join("/");
      if (!rewritten.includes(p)) rewritten.push(p);
    }
    out.push(...rewritten);
  }
  return out;
}

/** istiod's ExpandTrustDomainAliases: a value naming a trust domain of the bundle stands for all of them. */
export function expandTrustDomainAliases(domains: TrustDomains, values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    for (const d of domains.includes(v) ? domains : [v]) if (!out.includes(d)) out.push(d);
  }
  return out;
}
