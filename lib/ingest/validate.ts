/**
 * Validation of watch events before anything is applied: a malformed event (what the API server
 * could never send) fails its whole batch, naming its index and field; an object its kind's rules
 * refuse is screened out as a REJECTED event, to be skipped and reported while the rest applies.
 */

import { type KindDescriptor, kindOf, kindOfObject, kindsOfObject } from "../kinds/descriptors.ts";
import { isObject, quote, typeName } from "../registry/check.ts";
import { dns1035Label } from "../registry/names.ts";
import type { Result } from "./errors.ts";
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
  const envelope = validateEnvelope(obj);
  if (!envelope.ok) return envelope;
  const object = envelope.value;
  const refused = kindChecks[object.kind]?.(obj, "");
  if (type === "DELETED")
    return { ok: true, value: refused ? { type, object, unreadBody: true } : { type, object } };
  if (refused) return { ok: true, value: { type: "REJECTED", object, ...refused } };
  return { ok: true, value: { type: type as "ADDED" | "MODIFIED", object } };
}

/**
 * The kind, apiVersion and metadata: what identifies the object. The object comes back with `kind`
 * set to its kind's id (kindIdOf), a copy where that differs from the kind it carries.
 */
function validateEnvelope(obj: Record<string, unknown>): Result<KubeObject> {
  const fail = (field: string, message: string): Result<KubeObject> => ({
    ok: false,
    error: { field, message },
  });
  const kind = obj.kind;
  if (kind === undefined || kind === null || kind === "") return fail("object.kind", "is required");
  if (typeof kind !== "string") return fail("object.kind", `must be a string, got ${typeName(kind)}`);
  // As the API server checks a custom resource's kind (a DNS-1035 label once lower-cased), and
  // CamelCase as every Kubernetes kind is: "constructor" or "toString" can never be a kind.
  if (!/^[A-Z]/.test(kind) || dns1035Label(kind.toLowerCase()))
    return fail("object.kind", `${quote(kind)} is not a kind name (CamelCase letters and digits)`);
  const apiVersion = obj.apiVersion;
  if (apiVersion !== undefined && typeof apiVersion !== "string")
    return fail("object.apiVersion", `must be a string, got ${typeName(apiVersion)}`);
  const id = kindIdOf(apiVersion, kind);
  if (!id.ok) return fail("object.apiVersion", id.error);
  const known = id.known;
  if (known && apiVersion !== undefined && !known.apiVersions.includes(apiVersion)) {
    return fail(
      "object.apiVersion",
      `${quote(apiVersion)} is not served for ${kind}; want ${known.apiVersions.join(" or ")}`,
    );
  }
  const meta = validateMeta(obj.metadata, kind, known?.namespaced);
  if (meta) return { ok: false, error: meta };
  return { ok: true, value: (id.kind === kind ? obj : { ...obj, kind: id.kind }) as KubeObject };
}

/**
 * The id an object of `kind` at `apiVersion` is handled as: its descriptor's (lib/kinds/descriptors.ts),
 * so `networking.istio.io/v1 Gateway` is `Gateway` and `gateway.networking.k8s.io/v1 Gateway` is
 * `KubernetesGateway`; a kind the table does not know is its own name (ignored as unconverted). A
 * known kind under a group that does not serve it is another API's kind: it becomes
 * `<apiVersion> <kind>`, which no handler, check or record of the table's kind can match, so it
 * is ignored per object as an unknown kind is. No apiVersion: the one kind of that name, an error
 * when two groups serve one (the group tells them apart).
 */
export function kindIdOf(
  apiVersion: string | undefined,
  kind: string,
): { ok: true; kind: string; known?: KindDescriptor } | { ok: false; error: string } {
  const candidates = kindsOfObject(kind);
  // An id no object carries (KubernetesGateway) names no kind as an object's kind: another API's.
  if (candidates.length === 0) return { ok: true, kind: kindOf(kind) ? foreign(apiVersion, kind) : kind };
  if (apiVersion === undefined) {
    const [only, ...more] = candidates as [KindDescriptor, ...KindDescriptor[]];
    if (more.length === 0) return { ok: true, kind: only.kind, known: only };
    return {
      ok: false,
      error: `is required: ${kind} is a kind of ${candidates.map((d) => d.group).join(" and of ")}`,
    };
  }
  const known = kindOfObject(apiVersion, kind);
  return known ? { ok: true, kind: known.kind, known } : { ok: true, kind: foreign(apiVersion, kind) };
}

/** The id of a kind of another API that shares a name with one of the table: never a table id (it has a space). */
const foreign = (apiVersion: string | undefined, kind: string) => `${apiVersion ?? ""} ${kind}`;
