/**
 * Whole-batch validation of watch events. Every event is checked before anything is applied;
 * the first problem names its event index and field.
 */

import { kindOf } from "../kinds/descriptors.ts";
import { isObject, quote, typeName } from "./check.ts";
import type { IngestError, Result } from "./errors.ts";
import { eventTypes, type KubeObject, type WatchEvent } from "./events.ts";
import { kindChecks } from "./kinds/index.ts";
import { dns1035Label } from "./names.ts";
import { validateMeta } from "./validate-meta.ts";

/** Validates every event; on success the typed events, in order. */
export function validateEvents(raw: readonly unknown[]): Result<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for (let index = 0; index < raw.length; index++) {
    const r = validateEvent(raw[index]);
    if (!r.ok) return { ok: false, error: { index, ...r.error } };
    events.push(r.value);
  }
  return { ok: true, value: events };
}

/** Validates one watch event; errors name the field inside the event (the caller adds the index). */
export function validateEvent(e: unknown): Result<WatchEvent> {
  const fail = (field: string, message: string): Result<WatchEvent> => ({
    ok: false,
    error: { field, message },
  });
  if (!isObject(e)) return fail("", `an event must be an object, got ${typeName(e)}`);
  const type = e.type;
  if (typeof type !== "string" || !(eventTypes as readonly string[]).includes(type)) {
    return fail("type", `unknown event type ${JSON.stringify(type)}; want one of ${eventTypes.join(", ")}`);
  }
  const obj = e.object;
  if (type === "BOOKMARK") {
    const rv = isObject(obj) && isObject(obj.metadata) ? obj.metadata.resourceVersion : undefined;
    return {
      ok: true,
      value: { type: "BOOKMARK", resourceVersion: typeof rv === "string" ? rv : undefined },
    };
  }
  if (!isObject(obj)) return fail("object", `must be an object, got ${typeName(obj)}`);
  const problem = validateObject(obj);
  if (problem) return { ok: false, error: problem };
  return { ok: true, value: { type: type as "ADDED" | "MODIFIED" | "DELETED", object: obj as KubeObject } };
}

function validateObject(obj: Record<string, unknown>): IngestError | undefined {
  const kind = obj.kind;
  if (kind === undefined || kind === null || kind === "")
    return { field: "object.kind", message: "is required" };
  if (typeof kind !== "string")
    return { field: "object.kind", message: `must be a string, got ${typeName(kind)}` };
  // As the API server checks a custom resource's kind (a DNS-1035 label once lower-cased), and
  // CamelCase as every Kubernetes kind is: "constructor" or "toString" can never be a kind.
  if (!/^[A-Z]/.test(kind) || dns1035Label(kind.toLowerCase()))
    return {
      field: "object.kind",
      message: `${quote(kind)} is not a kind name (CamelCase letters and digits)`,
    };
  const known = kindOf(kind);
  const served = known?.apiVersions;
  if (served && obj.apiVersion !== undefined && !served.includes(obj.apiVersion as string)) {
    return {
      field: "object.apiVersion",
      message: `${quote(obj.apiVersion)} is not served for ${kind}; want ${served.join(" or ")}`,
    };
  }
  const meta = validateMeta(obj.metadata, kind, known?.namespaced);
  if (meta) return meta;
  return Object.hasOwn(kindChecks, kind) ? kindChecks[kind]?.(obj, "object") : undefined;
}
