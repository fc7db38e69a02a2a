/**
 * Validation of watch events before anything is applied: a malformed event (what the API server
 * could never send) fails its whole batch, naming its index and field; an object its kind's rules
 * refuse is screened out as a REJECTED event, to be skipped and reported while the rest applies.
 */

import { kindOf } from "../kinds/descriptors.ts";
import { isObject, quote, typeName } from "../registry/check.ts";
import { dns1035Label } from "../registry/names.ts";
import type { IngestError, Result } from "./errors.ts";
import { eventTypes, type KubeObject, type WatchEvent } from "./events.ts";
import { kindChecks } from "./kinds/index.ts";
import { validateMeta } from "./validate-meta.ts";

/**
 * Validates every event strictly: a refused object (REJECTED) fails the batch too, naming its
 * index and field. For rule tests and callers that hold only valid input; ingest screens instead.
 */
export function validateEvents(raw: readonly unknown[]): Result<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for (let index = 0; index < raw.length; index++) {
    const r = strict(validateEvent(raw[index]));
    if (!r.ok) return { ok: false, error: { index, ...r.error } };
    events.push(r.value);
  }
  return { ok: true, value: events };
}

/** A REJECTED event as the error it would be in a strict batch. */
export function strict(r: Result<WatchEvent>): Result<WatchEvent> {
  if (!r.ok || r.value.type !== "REJECTED") return r;
  const { field, message } = r.value;
  return { ok: false, error: { field: field ? `object.${field}` : "object", message } };
}

/**
 * Validates one watch event. A malformed event (no object, an unknown type, kind or apiVersion,
 * unusable metadata) is an error naming the field inside the event (the caller adds the index).
 * An ADDED or MODIFIED object that fails its kind's rules comes back as a REJECTED event; a DELETED
 * one is still a delete (istiod validates no delete: it only needs the name), marked `unreadBody`.
 */
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
  const problem = validateEnvelope(obj);
  if (problem) return { ok: false, error: problem };
  const object = obj as KubeObject;
  const refused = kindChecks[object.kind]?.(obj, "");
  if (type === "DELETED")
    return { ok: true, value: refused ? { type, object, unreadBody: true } : { type, object } };
  if (refused) return { ok: true, value: { type: "REJECTED", object, ...refused } };
  return { ok: true, value: { type: type as "ADDED" | "MODIFIED", object } };
}

/** The kind, apiVersion and metadata: what identifies the object. */
function validateEnvelope(obj: Record<string, unknown>): IngestError | undefined {
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
  return validateMeta(obj.metadata, kind, known?.namespaced);
}
