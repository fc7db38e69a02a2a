/**
 * The `mesh` key of the `istio` ConfigMap (or MESH_CONFIG_FILE) ▶ MeshConfigModel, as istiod's
 * ApplyMeshConfig reads it: YAML applied over the defaults, unknown keys ignored, a field of the
 * wrong type refused, then ValidateMeshConfig. Only the implemented fields are read and validated;
 * the others that are set come back as `unsupported`. Every problem names its field path.
 */

import { isObject, type Problem, quote, typeName } from "../check.ts";
import { isDns1123Label } from "../istio/istio-names.ts";
import { validateDiscoverySelectors } from "../kube/selectors.ts";
import type { MeshConfigModel, OutboundTrafficMode } from "./mesh-config.ts";
import { implementedMeshFields, isImplementedMeshField, meshFieldName } from "./mesh-config-fields.ts";
import { parseYamlMapping } from "./yaml-document.ts";

/** A parsed `mesh` document. */
export interface ParsedMeshConfig {
  model: MeshConfigModel;
  /** MeshConfig fields set and accepted but not implemented, sorted. */
  unsupported: string[];
  /** Keys MeshConfig does not have: ignored, as istiod ignores them; sorted. */
  unknown: string[];
}

export type MeshConfigResult = { ok: true; value: ParsedMeshConfig } | { ok: false; problem: Problem };

/** Parses and validates a `mesh` YAML document; the first problem wins. */
export function parseMeshConfig(text: string): MeshConfigResult {
  const doc = parseYamlMapping(text);
  if (!doc.ok) return doc;
  return readMeshConfig(doc.value);
}

/** readMeshConfig's work on an already decoded mapping. */
export function readMeshConfig(doc: Record<string, unknown>): MeshConfigResult {
  const set = new Map<string, unknown>();
  const unsupported = new Set<string>();
  const unknown: string[] = [];
  for (const key of Object.keys(doc)) {
    const name = meshFieldName(key);
    if (name === undefined) {
      unknown.push(key);
      continue;
    }
    const value = doc[key];
    // Protobuf JSON reads null as unset.
    if (value === null || value === undefined) continue;
    if (isImplementedMeshField(name)) set.set(name, value);
    else unsupported.add(name);
  }
  // Read in the table's order, so the same settings give the same model however the YAML orders them.
  const model: MeshConfigModel = {};
  for (const name of implementedMeshFields) {
    if (!set.has(name)) continue;
    const problem = readField(model, name, set.get(name));
    if (problem) return { ok: false, problem };
  }
  return { ok: true, value: { model, unsupported: [...unsupported].sort(), unknown: unknown.sort() } };
}

function readField(model: MeshConfigModel, name: string, v: unknown): Problem | undefined {
  switch (name) {
    case "trustDomain": {
      const p = trustDomain(v, name);
      if (!p) model.trustDomain = v as string;
      return p;
    }
    case "trustDomainAliases": {
      const p = list(v, name, trustDomain);
      // istiod keeps the aliases as a sorted set.
      if (!p) model.trustDomainAliases = [...new Set(v as string[])].sort();
      return p;
    }
    case "rootNamespace": {
      const p = str(v, name);
      if (p) return p;
      if (v === "") return undefined; // the proto default: not set
      // Taken as written, as istiod takes it (ValidateMeshConfig does not check it).
      model.rootNamespace = v as string;
      return undefined;
    }
    case "discoverySelectors": {
      const r = validateDiscoverySelectors(v);
      if (!r.ok) return splitProblem(r.error);
      model.discoverySelectors = r.selectors;
      return undefined;
    }
    case "outboundTrafficPolicy": {
      const r = outboundMode(v, name);
      if (typeof r === "object") return r;
      model.outboundTrafficPolicy = { mode: r };
      return undefined;
    }
    case "defaultServiceExportTo":
    case "defaultVirtualServiceExportTo":
    case "defaultDestinationRuleExportTo": {
      const p = list(v, name, exportToItem);
      if (!p) model[name] = [...(v as string[])];
      return p;
    }
    case "enableAutoMtls":
      if (typeof v !== "boolean") return { field: name, message: `must be a boolean, got ${typeName(v)}` };
      model.enableAutoMtls = v;
      return undefined;
    default:
      return { field: name, message: "is not implemented" };
  }
}

function str(v: unknown, field: string): Problem | undefined {
  return typeof v === "string" ? undefined : { field, message: `must be a string, got ${typeName(v)}` };
}

function list(
  v: unknown,
  field: string,
  item: (v: unknown, field: string) => Problem | undefined,
): Problem | undefined {
  if (!Array.isArray(v)) return { field, message: `must be a list, got ${typeName(v)}` };
  for (let i = 0; i < v.length; i++) {
    const p = item(v[i], `${field}[${i}]`);
    if (p) return p;
  }
  return undefined;
}

/** ValidateTrustDomain: dot-separated DNS-1123 labels of either case, a trailing dot allowed, never empty. */
function trustDomain(v: unknown, field: string): Problem | undefined {
  const p = str(v, field);
  if (p) return p;
  const domain = v as string;
  if (domain === "") return { field, message: "empty domain name not allowed" };
  const parts = domain.split(".");
  for (let i = 0; i < parts.length; i++) {
    if (i === parts.length - 1 && parts[i] === "") return undefined;
    if (!isDns1123Label(parts[i] as string))
      return { field, message: `trust domain name ${quote(domain)} invalid` };
  }
  return undefined;
}

/** An exportTo entry (`*`, `.`, `~` or a namespace): a string, unchecked beyond that, as istiod. */
function exportToItem(v: unknown, field: string): Problem | undefined {
  return str(v, field);
}

const modes: readonly OutboundTrafficMode[] = ["REGISTRY_ONLY", "ALLOW_ANY"];

/** outboundTrafficPolicy.mode by name or enum number; an empty policy is the proto default REGISTRY_ONLY. */
function outboundMode(v: unknown, field: string): OutboundTrafficMode | Problem {
  if (!isObject(v)) return { field, message: `must be an object, got ${typeName(v)}` };
  const mode = v.mode;
  if (mode === undefined || mode === null) return "REGISTRY_ONLY";
  if (typeof mode === "number" && modes[mode] !== undefined) return modes[mode] as OutboundTrafficMode;
  if (typeof mode === "string" && (modes as readonly string[]).includes(mode))
    return mode as OutboundTrafficMode;
  return {
    field: `${field}.mode`,
    message: `unsupported value ${quote(mode)}; want one of ${modes.join(", ")}`,
  };
}

/** A `path: message` error of the selector parser as a Problem. */
function splitProblem(error: string): Problem {
  const at = error.indexOf(": ");
  return at < 0
    ? { field: "discoverySelectors", message: error }
    : { field: error.slice(0, at), message: error.slice(at + 2) };
}
