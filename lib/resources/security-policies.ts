/**
 * The security.istio.io policies of a push, read from the store once per context (every cluster's
 * copy of a namespace/name counts once, as for Sidecars) and indexed per workload
 * (lib/registry/istio/security.ts).
 */

import { byCreation, type ConfigMeta } from "../registry/istio/config-meta.ts";
import {
  createSecurityPolicies,
  type SecurityPolicies,
  toAuthorizationPolicy,
  toPeerAuthentication,
} from "../registry/istio/security.ts";
import type { StoredConfig } from "../registry/istio/stored.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/**
 * Every stored config of `kind` as `convert` models it: one copy per namespace/name, whatever
 * cluster sent it (configs are mesh-wide), oldest first.
 */
export async function readConfigModels<T extends ConfigMeta>(
  store: Store,
  kind: string,
  convert: (meta: ConfigMeta, spec: unknown, dryRun: boolean) => T,
): Promise<T[]> {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const e of await listAll<StoredConfig<never>>(store, keys.configPrefix(kind))) {
    const c = e.value;
    const id = `${c.namespace}/${c.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const meta = {
      name: c.name,
      namespace: c.namespace,
      ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
    };
    out.push(convert(meta, c.spec, c.dryRun === true));
  }
  return out.sort(byCreation);
}

/** Every stored PeerAuthentication and AuthorizationPolicy, indexed for the mesh's root namespace. */
export async function loadSecurityPolicies(store: Store, rootNamespace: string): Promise<SecurityPolicies> {
  const [peers, authz] = await Promise.all([
    readConfigModels(store, "PeerAuthentication", toPeerAuthentication),
    readConfigModels(store, "AuthorizationPolicy", toAuthorizationPolicy),
  ]);
  return createSecurityPolicies(peers, authz, rootNamespace);
}
