/**
 * What every Istio networking config shares: its envelope, and the field syntaxes istiod's
 * validation webhook checks the same way in every kind (hosts, exportTo, workload selectors).
 * Pure; checks use lib/ingest/check.ts so their problems carry a field path.
 */
import { type Check, child, isObject, quote, typeName } from "../../ingest/check.ts";
import { dns1123Label, labelValue, qualifiedName } from "../../ingest/names.ts";

/** The Istio networking kinds edgepilot converts. */
export const istioKinds = [
  "ServiceEntry",
  "WorkloadEntry",
  "VirtualService",
  "DestinationRule",
  "Sidecar",
] as const;
export type IstioKind = (typeof istioKinds)[number];

/** The group/versions istiod serves these kinds at; the spec shape is the same in each. */
export const istioApiVersions = [
  "networking.istio.io/v1",
  "networking.istio.io/v1beta1",
  "networking.istio.io/v1alpha3",
] as const;

/**
 * One Istio config as the store keeps it: identity, ordering and the spec, nothing else.
 * `spec` is the validated spec of its kind (see the kind's module for the type).
 */
export interface IstioConfig<S = unknown> {
  kind: IstioKind;
  name: string;
  namespace: string;
  /** The cluster that reported it. */
  clusterId: string;
  resourceVersion: string;
  /** Sorted by key; WorkloadEntry and selectors need them, the rest carry them for debug output. */
  labels: Record<string, string>;
  spec: S;
}

/**
 * A host as istiod's ValidateWildcardDomain accepts it: `*`, or an FQDN whose first label may be
 * `*` (`*.example.com`), at most 255 characters, each label a DNS-1123 label, the last label not
 * all digits. Short names (`reviews`) are valid too: they are resolved against the config's
 * namespace where the kind says so.
 */
export const istioHost: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: "host must not be empty" };
  if (v.length > 255) return { field: path, message: `host ${quote(v)} is longer than 255 characters` };
  if (v === "*") return undefined;
  const rest = v.startsWith("*.") ? v.slice(2) : v;
  const labels = rest.split(".");
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as string;
    // A trailing dot (an absolute name, `istio.io.`) is allowed, as istiod allows it.
    if (label === "" && i === labels.length - 1 && i > 0) continue;
    const why = label === "" ? "must not be empty" : dns1123Label(label);
    if (why) return { field: path, message: `host ${quote(v)}: label ${quote(label)} ${why}` };
  }
  const last = labels.filter(Boolean).at(-1) ?? "";
  if (labels.length > 1 && /^[0-9]+$/.test(last))
    return {
      field: path,
      message: `host ${quote(v)}: the top-level domain ${quote(last)} must not be all digits`,
    };
  return undefined;
};

/**
 * exportTo as istiod validates it: `.` (own namespace), `*` (every namespace), `~` (none, and
 * only alone), or namespace names (DNS-1123 labels), without duplicates.
 */
export const exportTo: Check = (v, path) => {
  if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
  const seen = new Set<string>();
  for (let i = 0; i < v.length; i++) {
    const at = `${path}[${i}]`;
    const e = v[i];
    if (typeof e !== "string") return { field: at, message: `must be a string, got ${typeName(e)}` };
    if (seen.has(e)) return { field: at, message: `duplicate entry ${quote(e)}` };
    seen.add(e);
    if (e === "." || e === "*") continue;
    if (e === "~") {
      if (v.length > 1)
        return { field: at, message: `"~" (exported nowhere) cannot be combined with other entries` };
      continue;
    }
    const why = dns1123Label(e);
    if (why) return { field: at, message: `${quote(e)} is not ".", "*", "~" or a namespace name: ${why}` };
  }
  return undefined;
};

/** A label map as a selector takes it: keys qualified names, values label values. */
export const labelMap: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object of strings, got ${typeName(v)}` };
  for (const [k, x] of Object.entries(v)) {
    const at = child(path, k);
    if (typeof x !== "string") return { field: at, message: `must be a string, got ${typeName(x)}` };
    const badKey = qualifiedName(k);
    if (badKey) return { field: at, message: `label key ${quote(k)} ${badKey}` };
    const badValue = labelValue(x);
    if (badValue) return { field: at, message: `label value ${quote(x)} ${badValue}` };
  }
  return undefined;
};

/** A workloadSelector: `{ matchLabels: {...} }` with valid labels (istiod's ValidateWorkloadSelector). */
export const workloadSelector: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (v.matchLabels === undefined || v.matchLabels === null) return undefined;
  return labelMap(v.matchLabels, child(path, "matchLabels"));
};

/** True when every selector label is present with the same value (an empty selector selects all). */
export function selects(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/**
 * A networking.istio.io WorkloadSelector (ServiceEntry, Sidecar): `{ labels: {...} }`, as istiod's
 * ValidateAlphaWorkloadSelector checks it: no empty key and no `*` in a key or value. Other key and
 * value syntax is accepted, as istiod accepts it (such a selector matches nothing). An empty
 * selector is valid and selects every workload of the namespace. (`workloadSelector` above reads
 * `matchLabels`, the shape of the security and telemetry kinds.)
 */
export const networkingWorkloadSelector: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const labels = v.labels;
  if (labels === undefined || labels === null) return undefined;
  const at = child(path, "labels");
  if (!isObject(labels))
    return { field: at, message: `must be an object of strings, got ${typeName(labels)}` };
  for (const [k, x] of Object.entries(labels)) {
    const field = child(at, k);
    if (typeof x !== "string") return { field, message: `must be a string, got ${typeName(x)}` };
    if (k === "") return { field, message: "empty key is not supported in selector" };
    if (k.includes("*") || x.includes("*"))
      return { field, message: `wildcard is not supported in selector: ${quote(`${k}=${x}`)}` };
  }
  return undefined;
};

/** The labels of a networking WorkloadSelector, or undefined when there is no selector. */
export function selectorLabels(selector: unknown): Record<string, string> | undefined {
  if (!isObject(selector)) return undefined;
  return isObject(selector.labels) ? (selector.labels as Record<string, string>) : {};
}

/**
 * exportTo of a config in `namespace`, as istiod's validateExportTo: the `exportTo` syntax, and
 * `.` together with the namespace's own name is a duplicate, and `*` must stand alone.
 */
export const exportToIn =
  (namespace: string): Check =>
  (v, path) => {
    const p = exportTo(v, path);
    if (p || !Array.isArray(v)) return p;
    if (v.includes(".") && v.includes(namespace))
      return {
        field: `${path}[${v.indexOf(namespace)}]`,
        message: `duplicate entries in exportTo: "." and the config's own namespace ${quote(namespace)}`,
      };
    if (v.includes("*") && v.length > 1)
      return {
        field: `${path}[${v.indexOf("*")}]`,
        message: `cannot have both public ("*") and non-public exportTo values`,
      };
    return undefined;
  };
