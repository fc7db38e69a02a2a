/**
 * The mesh ConfigMap (istiod's kubemesh watcher): v1 ConfigMap `istio` in ISTIO_NAMESPACE, whose
 * `mesh` key holds MeshConfig YAML and `meshNetworks` key MeshNetworks YAML. A ConfigMap of any
 * other name is refused by its check; the namespace is refused by the ingest handler, which knows
 * ISTIO_NAMESPACE. A ConfigMap whose keys do not parse or validate is refused whole, naming the
 * key and the path inside it, so both stored records keep their last valid value.
 */
import { type Check, isObject, type Problem, quote, typeName } from "../check.ts";
import type { MeshNetworksModel } from "./mesh-networks.ts";
import { type ParsedMeshConfig, parseMeshConfig } from "./parse-mesh-config.ts";
import { parseMeshNetworks } from "./parse-mesh-networks.ts";
import { describeProblem } from "./yaml-document.ts";

/** The name of the mesh ConfigMap (istiod's MeshConfigMapName `istio`, no revision suffix). */
export const MESH_CONFIGMAP_NAME = "istio";
/** The namespace istiod reads it from when ISTIO_NAMESPACE is unset. */
export const DEFAULT_ISTIO_NAMESPACE = "istio-system";
/** The ConfigMap key of the MeshConfig YAML. */
export const MESH_KEY = "mesh";
/** The ConfigMap key of the MeshNetworks YAML. */
export const MESH_NETWORKS_KEY = "meshNetworks";

/** What a valid mesh ConfigMap holds: each key parsed, absent when the ConfigMap lacks it. */
export interface MeshConfigMapContent {
  mesh?: ParsedMeshConfig;
  meshNetworks?: MeshNetworksModel;
}

/**
 * Reads a mesh ConfigMap's `data`: each key parsed and validated; the problem names `data.<key>`
 * as its field and the path inside the YAML in its message (`networks.n1.endpoints[0].fromCidr: invalid CIDR "10.0.0/8"`).
 */
export function readMeshConfigMap(
  obj: Record<string, unknown>,
): { ok: true; value: MeshConfigMapContent } | { ok: false; problem: Problem } {
  const data = obj.data;
  if (data === undefined || data === null) return { ok: true, value: {} };
  if (!isObject(data))
    return {
      ok: false,
      problem: { field: "data", message: `must be an object of strings, got ${typeName(data)}` },
    };
  const value: MeshConfigMapContent = {};
  const text = (key: string): string | undefined | Problem => {
    const v = data[key];
    if (v === undefined || v === null) return undefined;
    return typeof v === "string"
      ? v
      : { field: `data.${key}`, message: `must be a string, got ${typeName(v)}` };
  };
  const mesh = text(MESH_KEY);
  if (typeof mesh === "object") return { ok: false, problem: mesh };
  if (mesh !== undefined) {
    const r = parseMeshConfig(mesh);
    if (!r.ok)
      return { ok: false, problem: { field: `data.${MESH_KEY}`, message: describeProblem(r.problem) } };
    value.mesh = r.value;
  }
  const networks = text(MESH_NETWORKS_KEY);
  if (typeof networks === "object") return { ok: false, problem: networks };
  if (networks !== undefined) {
    const r = parseMeshNetworks(networks);
    if (!r.ok)
      return {
        ok: false,
        problem: { field: `data.${MESH_NETWORKS_KEY}`, message: describeProblem(r.problem) },
      };
    value.meshNetworks = r.value;
  }
  return { ok: true, value };
}

/** The ConfigMap kind's check: only the mesh ConfigMap is taken, and only with valid keys. */
export const meshConfigMapCheck: Check = (value, path) => {
  if (!isObject(value)) return { field: path, message: `must be an object, got ${typeName(value)}` };
  const name = isObject(value.metadata) ? value.metadata.name : undefined;
  if (name !== MESH_CONFIGMAP_NAME)
    return {
      field: path ? `${path}.metadata.name` : "metadata.name",
      message: `${quote(name)}: only the mesh ConfigMap ${quote(MESH_CONFIGMAP_NAME)} in ISTIO_NAMESPACE is read`,
    };
  const r = readMeshConfigMap(value);
  if (r.ok) return undefined;
  return { field: path ? `${path}.${r.problem.field}` : r.problem.field, message: r.problem.message };
};
