/**
 * What every Istio networking config shares: its envelope, and the field syntaxes istiod's
 * validation webhook checks the same way in every kind (hosts, labels, workload selectors, the
 * annotations istiod refuses).
 * Pure; checks use lib/registry/check.ts so their problems carry a field path.
 */
import { type Check, child, isObject, type Problem, quote, typeName } from "../check.ts";
import { labelsProblem, wildcardDomainProblem } from "./istio-names.ts";

/** The Istio kinds edgepilot converts and stores: networking.istio.io, then security.istio.io. */
export const istioKinds = [
  "ServiceEntry",
  "WorkloadEntry",
  "VirtualService",
  "DestinationRule",
  "Sidecar",
  "PeerAuthentication",
  "AuthorizationPolicy",
  "Gateway",
  "GatewayClass",
  "KubernetesGateway",
  "HTTPRoute",
  "GRPCRoute",
  "ReferenceGrant",
] as const;
export type IstioKind = (typeof istioKinds)[number];

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
 * A host as istiod's ValidateWildcardDomain accepts it: at most 255 characters, an FQDN whose
 * first label may be a wildcard label (`*`, `*.example.com`, `*example.com`, `*-x.example.com`),
 * every other label a DNS-1123 label of either case, the top-level label not a number. Short names
 * (`reviews`) are valid too: the kinds resolve them against the config's namespace.
 */
export const istioHost: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const why = wildcardDomainProblem(v);
  return why ? { field: path, message: why } : undefined;
};

/** Labels as istiod checks them (labels.Instance.Validate): subset labels, sourceLabels, endpoint labels. */
export const labelMap: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object of strings, got ${typeName(v)}` };
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== "string")
      return { field: child(path, k), message: `must be a string, got ${typeName(x)}` };
  }
  const why = labelsProblem(v);
  return why ? { field: child(path, why.key), message: why.message } : undefined;
};

/**
 * A selector's labels as istiod (ValidateAlphaWorkloadSelector, validateWorkloadSelector) and the
 * CRD check them: at most `max` labels, no empty key, no `*` in a key or value, values at most 63
 * characters. Other syntax is accepted, as istiod accepts it (such a selector matches nothing).
 */
function selectorLabelsProblem(labels: unknown, path: string, max: number): Problem | undefined {
  if (!isObject(labels))
    return { field: path, message: `must be an object of strings, got ${typeName(labels)}` };
  const entries = Object.entries(labels);
  if (entries.length > max) return { field: path, message: `must have at most ${max} labels` };
  for (const [k, x] of entries) {
    const field = child(path, k);
    if (typeof x !== "string") return { field, message: `must be a string, got ${typeName(x)}` };
    if (k === "") return { field, message: `empty key is not supported in selector: ${quote(`${k}=${x}`)}` };
    if (k.includes("*") || x.includes("*"))
      return { field, message: `wildcard is not supported in selector: ${quote(`${k}=${x}`)}` };
    if (x.length > 63) return { field, message: "must be at most 63 characters" };
  }
  return undefined;
}

/** A security-style workloadSelector `{ matchLabels }` (DestinationRule). */
export const workloadSelector: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (v.matchLabels === undefined || v.matchLabels === null) return undefined;
  return selectorLabelsProblem(v.matchLabels, child(path, "matchLabels"), 4096);
};

/** A networking.istio.io WorkloadSelector `{ labels }` (ServiceEntry, Sidecar); empty selects the namespace. */
export const networkingWorkloadSelector: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (v.labels === undefined || v.labels === null) return undefined;
  return selectorLabelsProblem(v.labels, child(path, "labels"), 256);
};

/**
 * validateMetadata, run by istiod for every kind before the kind's own checks: the
 * `istio.io/dry-run` annotation (AuthorizationPolicy only) and the internal annotations users may
 * not set are refused.
 */
export const istioMetadata: Check = (obj, path) => {
  if (!isObject(obj) || !isObject(obj.metadata) || !isObject(obj.metadata.annotations)) return undefined;
  const a = obj.metadata.annotations;
  const at = child(child(path, "metadata"), "annotations");
  if (Object.hasOwn(a, "istio.io/dry-run")) {
    const p = dryRunProblem(obj, a["istio.io/dry-run"]);
    if (p) return { field: child(at, "istio.io/dry-run"), message: p };
  }
  for (const k of ["internal.istio.io/webhook-always-reject"])
    if (Object.hasOwn(a, k)) return { field: child(at, k), message: `"${k}" annotation found, rejecting` };
  for (const k of ["internal.istio.io/parent-namespace", "internal.istio.io/parents"])
    if (Object.hasOwn(a, k))
      return { field: child(at, k), message: `"${k}" annotation found, this may not be set by users` };
  return undefined;
};

/** Go's strconv.ParseBool: the spellings it accepts. */
const goTrue = ["1", "t", "T", "TRUE", "true", "True"];
const goBools = new Set([...goTrue, "0", "f", "F", "FALSE", "false", "False"]);

/** Whether an object's `istio.io/dry-run` annotation is true as Go's strconv.ParseBool reads it (istiod's authz model). */
export function dryRunAnnotated(annotations: Readonly<Record<string, string>> | undefined): boolean {
  const v = annotations?.["istio.io/dry-run"];
  return v !== undefined && goTrue.includes(v);
}

/**
 * checkDryRunAnnotation: only an AuthorizationPolicy may carry `istio.io/dry-run`, only with
 * action ALLOW or DENY (absent: ALLOW) and a value Go parses as a bool.
 */
function dryRunProblem(obj: Record<string, unknown>, value: unknown): string | undefined {
  const m = isObject(obj.metadata) ? obj.metadata : {};
  const id = `${String(m.namespace ?? "")}/${String(m.name ?? "")}`;
  if (obj.kind !== "AuthorizationPolicy")
    return `${id} has unsupported annotation istio.io/dry-run, please remove the annotation`;
  const spec = isObject(obj.spec) ? obj.spec : {};
  const action = typeof spec.action === "string" ? spec.action : "ALLOW";
  if (action !== "ALLOW" && action !== "DENY")
    return `the annotation istio.io/dry-run currently only supports action ALLOW/DENY, found action ${action} in ${id}`;
  const v = String(value);
  if (!goBools.has(v))
    return `${id} has annotation istio.io/dry-run with invalid value (${v}): strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`;
  return undefined;
}

/** True when every selector label is present with the same value (an empty selector selects all). */
export function selects(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/** The labels of a networking WorkloadSelector, or undefined when there is no selector. */
export function selectorLabels(selector: unknown): Record<string, string> | undefined {
  if (!isObject(selector)) return undefined;
  return isObject(selector.labels) ? (selector.labels as Record<string, string>) : {};
}
