/** Validates a resync body: a Kubernetes List of one kind, exactly as the API server returns it from a list call. */

import { type KindDescriptor, kindInGroup, kindOf, kindTable } from "../kinds/descriptors.ts";
import { noPace, type Pace } from "../pace.ts";
import { isObject, typeName } from "../registry/check.ts";
import type { IngestError, Result } from "./errors.ts";
import type { ResyncList } from "./resync.ts";
import { validateEventsPaced } from "./validate-paced.ts";

/**
 * Checks the list whole (paced: one item at a time); items may omit apiVersion and kind (list responses do), which are
 * filled from the kind named. A malformed item fails the list, named as `items[i]` and the field inside it; an item its
 * kind's rules refuse is listed in `rejected` and the rest stands. `kind` is a kind's id; with `group`, it may
 * instead be the object kind of that group's kind (`Gateway` of gateway.networking.k8s.io is KubernetesGateway).
 */
export async function validateList(
  kind: string,
  body: unknown,
  pace: Pace = noPace,
  watching?: string,
  group?: string,
): Promise<Result<ResyncList>> {
  const known = resyncKind(kind, group);
  if (!known.ok) return { ok: false, error: { field: known.field, message: known.error } };
  const { value: d } = known;
  if (!isObject(body))
    return { ok: false, error: { message: `a resync body is a List object, got ${typeName(body)}` } };
  const listKind = `${d.objectKind}List`;
  if (body.kind !== undefined && body.kind !== listKind) {
    return {
      ok: false,
      error: { field: "kind", message: `${JSON.stringify(body.kind)} is not a ${listKind}` },
    };
  }
  if (!Array.isArray(body.items)) {
    return { ok: false, error: { field: "items", message: `must be an array, got ${typeName(body.items)}` } };
  }
  // Items are filled in place (the parsed body is ours), a slice at a time: copying each item of a
  // large list would be one long step, mostly the collection of its garbage.
  const events: { type: "ADDED"; object: unknown }[] = [];
  for (const item of body.items) {
    if (isObject(item)) {
      item.apiVersion ??= d.apiVersions[0];
      item.kind ??= d.objectKind;
    }
    events.push({ type: "ADDED", object: item });
    await pace();
  }
  const validated = await validateEventsPaced(events, pace);
  if (!validated.ok) {
    const { index, field = "", message } = validated.error;
    const inner = field.replace(/^object\.?/, "");
    return { ok: false, error: { index, field: `items[${index}]${inner ? `.${inner}` : ""}`, message } };
  }
  const wrongKind = validated.value.findIndex((e) => e.type !== "BOOKMARK" && e.object.kind !== d.kind);
  if (wrongKind >= 0) return { ok: false, error: wrongItem(d, wrongKind, body.items[wrongKind]) };
  const meta = isObject(body.metadata) ? body.metadata : {};
  return {
    ok: true,
    value: {
      kind: d.kind,
      resourceVersion: typeof meta.resourceVersion === "string" ? meta.resourceVersion : "",
      items: validated.value.flatMap((e) => (e.type === "ADDED" ? [e.object] : [])),
      rejected: validated.value.flatMap((e, index) => (e.type === "REJECTED" ? [{ ...e, index }] : [])),
      ...(watching !== undefined && { watching: watchedKinds(watching) }),
    },
  };
}

/**
 * The kinds a sender says it watches (`watching=Service,Pod,...`), as known kind names in table
 * order: a name edgepilot does not know (a newer relay's kind) is ignored, so the list is bounded.
 */
export function watchedKinds(watching: string): string[] {
  const named = new Set(watching.split(","));
  return kindTable.filter((d) => named.has(d.kind)).map((d) => d.kind);
}

/**
 * The kind a resync names: the id as written, or with `group` the kind of that group whose objects
 * carry `kind` (or whose id it is). Not found ▶ an error naming the parameter.
 */
function resyncKind(
  kind: string,
  group: string | undefined,
): { ok: true; value: KindDescriptor } | { ok: false; field: string; error: string } {
  if (group === undefined) {
    const d = kindOf(kind);
    if (d) return { ok: true, value: d };
    const want = kindTable.map((k) => k.kind).join(", ");
    return {
      ok: false,
      field: "kind",
      error: `cannot resync kind ${JSON.stringify(kind)}; want one of ${want}`,
    };
  }
  const byId = kindOf(kind);
  const d = kindInGroup(group, kind) ?? (byId?.group === group ? byId : undefined);
  if (d) return { ok: true, value: d };
  const served = kindTable.filter((k) => k.group === group).map((k) => k.objectKind);
  return {
    ok: false,
    field: "group",
    error:
      `${JSON.stringify(group)} has no kind ${JSON.stringify(kind)}` +
      (served.length > 0 ? `; want one of ${served.join(", ")}` : "; no kind of that group is known"),
  };
}

/** Why item `index` is not of the list's kind: another group's kind of that name (its apiVersion), or another kind. */
function wrongItem(d: KindDescriptor, index: number, item: unknown): IngestError {
  const sent = isObject(item) ? item : {};
  if (sent.kind === d.objectKind) {
    const message = `${JSON.stringify(sent.apiVersion)} is not ${d.group}: the list is of ${d.objectKind} (${d.apiVersions.join(", ")})`;
    return { index, field: `items[${index}].apiVersion`, message };
  }
  return { index, field: `items[${index}].kind`, message: `is not ${d.objectKind}` };
}
