/**
 * PeerAuthentication as istiod's validation webhook checks it (ValidatePeerAuthentication), with
 * the CRD's types and bounds, first problem only, with the field path from the object: port-level
 * mTLS only on a workload policy and never empty, its ports 1-65535, modes of the enum, and the
 * selector. Warnings: warnings-security.ts.
 */
import { type Check, child, isObject, oneOf, typeName } from "../check.ts";
import { istioMetadata, workloadSelector } from "./common.ts";
import { has, objectProblem, type P } from "./validate-fields.ts";

const modes = ["UNSET", "DISABLE", "PERMISSIVE", "STRICT"];

/** An `mtls` value: an object whose mode, when set, is of the enum. */
function mutualTls(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  return has(v, "mode") ? oneOf(modes)(v.mode, child(path, "mode")) : undefined;
}

/** Whether a selector names at least one label (istiod's emptySelector is its negation). */
export function selectsLabels(selector: unknown): boolean {
  return isObject(selector) && isObject(selector.matchLabels) && Object.keys(selector.matchLabels).length > 0;
}

/** Checks a PeerAuthentication object's metadata annotations and `spec`. */
export const peerAuthenticationCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  // An absent spec is the empty spec: a namespace (or mesh) policy that inherits its mode.
  const s = has(obj, "spec") ? obj.spec : {};
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const at = (k: string) => child(specPath, k);
  const p =
    istioMetadata(obj, path) ??
    (has(s, "selector") ? workloadSelector(s.selector, at("selector")) : undefined) ??
    (has(s, "mtls") ? mutualTls(s.mtls, at("mtls")) : undefined);
  if (p) return p;
  if (!has(s, "portLevelMtls")) return undefined;
  const ports = s.portLevelMtls;
  const portsPath = at("portLevelMtls");
  const q = objectProblem(ports, portsPath);
  if (q || !isObject(ports)) return q;
  const entries = Object.entries(ports);
  if (entries.length > 0 && !selectsLabels(s.selector))
    return { field: portsPath, message: "mesh/namespace peer authentication cannot have port level mTLS" };
  if (entries.length === 0)
    return { field: portsPath, message: "port level mTLS, if defined, must have at least one element" };
  for (const [port, mtls] of entries) {
    const portPath = child(portsPath, port);
    // A map key is a uint32 in the proto: anything else is no port.
    if (!/^[0-9]{1,10}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
      return { field: portPath, message: "port must be in range 1..65535" };
    const r = mutualTls(mtls ?? {}, portPath);
    if (r) return r;
  }
  return undefined;
};
