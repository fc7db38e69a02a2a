/**
 * One YAML document of the `istio` ConfigMap (or a mounted file) as istiod reads it (sigs.k8s.io/yaml
 * to JSON, then protobuf JSON): a mapping at the top, an empty document taken as an empty mapping.
 */
import { CORE_SCHEMA, load } from "js-yaml";
import type { Problem } from "../check.ts";
import { isObject, typeName } from "../check.ts";

/** The top-level mapping of `text`, or the problem: YAML that does not parse, or a document that is no mapping. */
export function parseYamlMapping(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: Problem } {
  let value: unknown;
  try {
    // The core schema: plain YAML values only (no timestamps or binary), as JSON conversion keeps them.
    value = load(text, { schema: CORE_SCHEMA, json: true });
  } catch (e) {
    const reason = (e as Error).message.split("\n")[0] ?? "";
    return { ok: false, problem: { field: "", message: `not valid YAML: ${reason}` } };
  }
  if (value === undefined || value === null) return { ok: true, value: {} };
  if (!isObject(value))
    return { ok: false, problem: { field: "", message: `must be a YAML mapping, got ${typeName(value)}` } };
  return { ok: true, value };
}

/** `<path>: <message>`, or the message alone for the document itself. */
export function describeProblem(p: Problem): string {
  return p.field ? `${p.field}: ${p.message}` : p.message;
}
