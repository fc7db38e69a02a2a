/**
 * Istio's host names and visibility rules, pure: short names resolved as ResolveShortnameToFQDN does,
 * host matching as pkg/config/host (Matches, SubsetOf, MostSpecificHostMatch), and exportTo as
 * istiod validates and applies it to VirtualServices and DestinationRules (default: public).
 */

import { parseIp } from "../../model/ip.ts";
import { type Check, typeName } from "../check.ts";
import { isDns1123Label } from "./istio-names.ts";

/**
 * ResolveShortnameToFQDN: a name without a dot becomes `<name>.<namespace>.svc.<domainSuffix>`;
 * `*`, IP addresses and names with a dot (`reviews.prod`, `*.example.com`) are kept as written.
 */
export function resolveHost(hostname: string, namespace: string, domainSuffix: string): string {
  if (hostname === "" || hostname === "*" || hostname.includes(".") || parseIp(hostname).ok) return hostname;
  let out = hostname;
  if (namespace !== "") out = `${out}.${namespace}`;
  if (domainSuffix !== "") out = `${out}.svc.${domainSuffix}`;
  return out;
}

/** host.Name.IsWildCarded: the name starts with `*`. */
export function isWildcard(h: string): boolean {
  return h.startsWith("*");
}

/** host.Name.Matches: true when the two names (either may be a wildcard) overlap. */
export function hostMatches(a: string, b: string): boolean {
  const aw = isWildcard(a);
  const bw = isWildcard(b);
  if (aw && bw) return a.slice(1).endsWith(b.slice(1)) || b.slice(1).endsWith(a.slice(1));
  if (aw) return b.endsWith(a.slice(1));
  if (bw) return a.endsWith(b.slice(1));
  return a === b;
}

/** host.Name.SubsetOf: every name `a` covers is covered by `b`. */
export function hostSubsetOf(a: string, b: string): boolean {
  if (isWildcard(b)) return isWildcard(a) ? a.slice(1).endsWith(b.slice(1)) : a.endsWith(b.slice(1));
  return !isWildcard(a) && a === b;
}

/** host.MoreSpecific: an exact name beats a wildcard; then the longer name; ties by text. */
export function moreSpecific(a: string, b: string): boolean {
  const aw = isWildcard(a);
  const bw = isWildcard(b);
  if (aw !== bw) return !aw;
  if (a.length !== b.length) return a.length > b.length;
  return a < b;
}

/**
 * MostSpecificHostMatch: the exact entry for `needle` when there is one, else the most specific
 * wildcard key whose suffix the needle ends with. Keys of `specific` are exact names.
 */
export function mostSpecificHostMatch<V>(
  needle: string,
  specific: ReadonlyMap<string, V>,
  wildcard: ReadonlyMap<string, V>,
): { host: string; value: V } | undefined {
  if (isWildcard(needle)) {
    const v = wildcard.get(needle);
    if (v !== undefined) return { host: needle, value: v };
  } else {
    const v = specific.get(needle);
    if (v !== undefined) return { host: needle, value: v };
  }
  const bare = isWildcard(needle) ? needle.slice(1) : needle;
  let best: { host: string; value: V } | undefined;
  for (const [h, v] of wildcard) {
    if (!bare.endsWith(h.slice(1))) continue;
    if (!best || moreSpecific(h, best.host)) best = { host: h, value: v };
  }
  return best;
}

/**
 * Whether a config (or service) in `configNamespace` with `exportTo` is visible to proxies in
 * `proxyNamespace`: empty = public (readers put the mesh's default exportTo in place of an empty
 * list first: istio-configs.ts, views.ts), `*` = everyone, `.` = its own namespace, `~` = no one,
 * else the listed namespaces.
 */
export function exportedTo(
  exportTo: readonly string[] | undefined,
  configNamespace: string,
  proxyNamespace: string,
): boolean {
  if (!exportTo || exportTo.length === 0) return true;
  for (const e of exportTo) {
    if (e === "*" || e === proxyNamespace) return true;
    if (e === "." && configNamespace === proxyNamespace) return true;
  }
  return false;
}

/** Where an exportTo list belongs, for the rules that depend on it. */
interface ExportToKind {
  /** A ServiceEntry may be exported to no one (`~`). */
  serviceEntry?: boolean;
  /** A DestinationRule with a workload selector stays in its own namespace. */
  destinationRuleWithSelector?: boolean;
}

/**
 * exportTo as istiod's validateExportTo checks it for a config in `namespace`: `.` (its own
 * namespace), `*` (every namespace) alone, `~` (no one) alone and for a ServiceEntry only, else
 * namespace names (DNS-1123 labels), no duplicates (`.` and the namespace's own name count as one).
 */
export const exportToCheck =
  (namespace: string, kind: ExportToKind = {}): Check =>
  (v, path) => {
    if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
    const seen = new Set<string>();
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      const at = `${path}[${i}]`;
      if (typeof e !== "string") return { field: at, message: `must be a string, got ${typeName(e)}` };
      const key = e === "." ? namespace : e;
      if (seen.has(key))
        return {
          field: at,
          message:
            key !== e
              ? `duplicate entries in exportTo: . and current namespace ${namespace}`
              : `duplicate entries in exportTo for entry ${e}`,
        };
      if (!(kind.serviceEntry && e === "~")) {
        if (key === "~")
          return { field: at, message: "exportTo ~ (none) is not allowed for Istio configuration objects" };
        if (key !== "." && key !== "*" && !isDns1123Label(key))
          return { field: at, message: "only .,*, or a valid DNS 1123 label is allowed as exportTo entry" };
      }
      seen.add(key);
    }
    if (kind.destinationRuleWithSelector && seen.size > 0) {
      if (!seen.has(namespace))
        return {
          field: path,
          message: "destination rule with workload selector cannot have exportTo beyond current namespace",
        };
      if (seen.size > 1)
        return {
          field: path,
          message: "destination rule with workload selector cannot have multiple entries in exportTo",
        };
    }
    if (seen.has("*") && v.length > 1)
      return {
        field: path,
        message: "cannot have both public (*) and non-public exportTo values for a resource",
      };
    if (seen.has("~") && v.length > 1)
      return { field: path, message: "cannot export service entry to no one (~) and someone" };
    return undefined;
  };
