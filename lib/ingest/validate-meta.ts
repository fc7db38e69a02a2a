/**
 * ObjectMeta as the API server validates it (ValidateObjectMeta): the name by its kind's rule,
 * the namespace a DNS-1123 label where the kind lives in one (and none where it does not),
 * labels and annotations by key and value syntax, annotations at most 256 KiB in total.
 */

import {
  type Check,
  child,
  isObject,
  named,
  type Problem,
  quote,
  string,
  stringMap,
  typeName,
} from "../registry/check.ts";
import {
  dns1035Label,
  dns1123Label,
  dns1123Subdomain,
  labelValue,
  type NameRule,
  qualifiedName,
} from "../registry/names.ts";
import { utf8Length } from "../utf8.ts";

/** The API server's TotalAnnotationSizeLimitB. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/**
 * Name rules by kind: Services are DNS-1035 labels (a name becomes the first label of a
 * hostname, so a dot would let one service take another's), Namespaces DNS-1123 labels, every
 * other kind (EndpointSlice, Endpoints, Pod, Node and custom resources) a DNS-1123 subdomain.
 */
export const nameRules: Readonly<Record<string, NameRule>> = {
  Service: dns1035Label,
  Namespace: dns1123Label,
};

/** The name rule of a kind. */
export function nameRule(kind: string): NameRule {
  return Object.hasOwn(nameRules, kind) ? (nameRules[kind] as NameRule) : dns1123Subdomain;
}

/** Label keys are qualified names, values label values. */
export const labels: Check = stringMap(qualifiedName, named(labelValue, true));

const annotationKeys: Check = stringMap((k) => qualifiedName(k.toLowerCase()));

const annotations: Check = (v, path) => {
  const p = annotationKeys(v, path);
  if (p || !isObject(v)) return p;
  let total = 0;
  for (const [k, x] of Object.entries(v)) total += utf8Length(k) + utf8Length(x as string);
  return total > MAX_ANNOTATIONS_BYTES
    ? { field: path, message: `may not be more than ${MAX_ANNOTATIONS_BYTES} bytes in total, got ${total}` }
    : undefined;
};

/**
 * Checks `object.metadata` of a `kind` object; `namespaced` is whether the kind lives in a
 * namespace (undefined for kinds we do not know: then a namespace is checked when present).
 */
export function validateMeta(
  meta: unknown,
  kind: string,
  namespaced: boolean | undefined,
): Problem | undefined {
  if (!isObject(meta)) return { field: metaPath, message: `is required: an object, got ${typeName(meta)}` };
  if (meta.name === undefined || meta.name === null || meta.name === "")
    return { field: namePath, message: "is required" };
  const name = nameCheck(kind)(meta.name, namePath);
  if (name)
    return {
      ...name,
      message: `${name.message} (the name of a ${namespaced === undefined ? quote(kind) : kind})`,
    };
  const ns = meta.namespace;
  if (namespaced === true || (namespaced === undefined && ns !== undefined && ns !== "")) {
    if (ns === undefined || ns === null || ns === "")
      return { field: nsPath, message: `is required for a ${kind}` };
    const p = namespaceCheck(ns, nsPath);
    if (p) return p;
  } else if (namespaced === false && ns !== undefined && ns !== null && ns !== "") {
    return { field: nsPath, message: `${quote(ns)}: a ${kind} is cluster-scoped and has no namespace` };
  }
  for (const [field, check, path] of metaFields) {
    if (meta[field] === undefined || meta[field] === null) continue;
    const p = check(meta[field], path);
    if (p) return p;
  }
  return undefined;
}

// Built once: every event's metadata is checked with the same paths and checks (nothing per call).
const metaPath = "object.metadata";
const namePath = child(metaPath, "name");
const nsPath = child(metaPath, "namespace");
const namespaceCheck: Check = named(dns1123Label);
const nameChecks = new Map<NameRule, Check>();

/** The name check of a kind's rule, made once per rule. */
function nameCheck(kind: string): Check {
  const rule = nameRule(kind);
  let check = nameChecks.get(rule);
  if (check === undefined) {
    check = named(rule);
    nameChecks.set(rule, check);
  }
  return check;
}

const metaFields: readonly (readonly [string, Check, string])[] = (
  [
    ["labels", labels],
    ["annotations", annotations],
    ["resourceVersion", string],
    ["uid", string],
    ["deletionTimestamp", string],
  ] as const
).map(([field, check]) => [field, check, child(metaPath, field)] as const);
