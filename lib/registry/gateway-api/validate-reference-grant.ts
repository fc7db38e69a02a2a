/**
 * ReferenceGrant (gateway.networking.k8s.io v1, v1beta1, v1alpha2: one schema) as the
 * standard-channel CRD checks it: 1-16 `from` (group, kind, namespace) and `to` (group, kind,
 * optional name) entries.
 */
import type { Check } from "../check.ts";
import { group, kind, list, namespace, obj, objectName, specOf } from "./validate-schema.ts";

const referenceGrantSpec: Check = obj(
  {
    from: list(obj({ group, kind, namespace }, ["group", "kind", "namespace"]), { min: 1, max: 16 }),
    to: list(obj({ group, kind, name: objectName }, ["group", "kind"]), { min: 1, max: 16 }),
  },
  ["from", "to"],
);

/** Checks a ReferenceGrant object's `spec` as the Gateway API's CRD does (its spec is optional there). */
export const referenceGrantCheck: Check = (o, path) => specOf(o, path, referenceGrantSpec, false);
