/**
 * ReferenceGrant as istiod reads it (gatewaycommon.ReferenceGrants): a grant in namespace `to`
 * lets objects of (group, kind) in a `from` namespace refer to objects of a `to` (group, kind),
 * all of them or the one named. Only cross-namespace references need one.
 */

import type { ReferenceGrantSpec } from "./types.ts";

/** A ReferenceGrant as the translation reads it. */
export interface GrantInput {
  namespace: string;
  spec: ReferenceGrantSpec;
}

/** One reference to check: who refers (group, kind, namespace) to what (group, kind, namespace, name). */
export interface ReferenceQuery {
  fromGroup: string;
  fromKind: string;
  fromNamespace: string;
  toGroup: string;
  toKind: string;
  toNamespace: string;
  toName: string;
}

/** Answers whether a reference is allowed; the same namespace always is. */
export interface ReferenceGrants {
  allowed(q: ReferenceQuery): boolean;
}

/** Indexes the grants once per translation, so each check is a scan of one namespace's grants. */
export function createReferenceGrants(grants: readonly GrantInput[]): ReferenceGrants {
  const byNamespace = new Map<string, ReferenceGrantSpec[]>();
  for (const g of grants) byNamespace.set(g.namespace, [...(byNamespace.get(g.namespace) ?? []), g.spec]);
  return {
    allowed(q) {
      if (q.fromNamespace === q.toNamespace) return true;
      for (const spec of byNamespace.get(q.toNamespace) ?? []) {
        const from = (spec.from ?? []).some(
          (f) => f.group === q.fromGroup && f.kind === q.fromKind && f.namespace === q.fromNamespace,
        );
        if (!from) continue;
        const to = (spec.to ?? []).some(
          (t) =>
            (t.group ?? "") === q.toGroup &&
            t.kind === q.toKind &&
            (t.name === undefined || t.name === "" || t.name === q.toName),
        );
        if (to) return true;
      }
      return false;
    },
  };
}
