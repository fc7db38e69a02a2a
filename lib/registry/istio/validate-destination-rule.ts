/**
 * DestinationRule as istiod's validation webhook checks it (ValidateDestinationRule), with the
 * CRD's bounds, first problem only, with the field path from the object: host, traffic policies
 * (validate-traffic-policy.ts) at the top, per port and per subset, subsets (names unique, labels),
 * exportTo and workloadSelector. Warnings: warnings.ts.
 */
import { type Check, child, isObject, quote, typeName } from "../check.ts";
import { istioHost, istioMetadata, labelMap, workloadSelector } from "./common.ts";
import { eachOf, has, type P, subsetName } from "./validate-fields.ts";
import { trafficPolicy } from "./validate-traffic-policy.ts";
import { exportToCheck } from "./visibility.ts";

/** Checks a DestinationRule object's metadata annotations and `spec`. */
export const destinationRuleCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  const s = obj.spec;
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const namespace = typeof meta.namespace === "string" ? meta.namespace : "";
  const hostPath = child(specPath, "host");
  if (!has(s, "host")) return { field: hostPath, message: "is required" };
  const at = (k: string) => child(specPath, k);
  return (
    istioMetadata(obj, path) ??
    istioHost(s.host, hostPath) ??
    (has(s, "trafficPolicy") ? trafficPolicy(s.trafficPolicy, at("trafficPolicy"), namespace) : undefined) ??
    (has(s, "subsets") ? subsets(s.subsets, at("subsets"), namespace) : undefined) ??
    (has(s, "exportTo")
      ? exportToCheck(namespace, { destinationRuleWithSelector: has(s, "workloadSelector") })(
          s.exportTo,
          at("exportTo"),
        )
      : undefined) ??
    (has(s, "workloadSelector") ? workloadSelector(s.workloadSelector, at("workloadSelector")) : undefined)
  );
};

function subsets(v: unknown, path: string, namespace: string): P {
  const seen = new Set<string>();
  return eachOf(v, path, (s, at) => {
    if (!isObject(s)) return { field: at, message: `must be an object, got ${typeName(s)}` };
    const namePath = child(at, "name");
    if (!has(s, "name")) return { field: namePath, message: "is required" };
    const name = s.name;
    if (typeof name === "string" && seen.has(name))
      return { field: namePath, message: `duplicate subset names: ${quote(name)}` };
    if (typeof name === "string") seen.add(name);
    return (
      subsetName(name, namePath) ??
      (has(s, "labels") ? labelMap(s.labels, child(at, "labels")) : undefined) ??
      (has(s, "trafficPolicy")
        ? trafficPolicy(s.trafficPolicy, child(at, "trafficPolicy"), namespace)
        : undefined)
    );
  });
}
