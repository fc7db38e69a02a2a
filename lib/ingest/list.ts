/** Validates a resync body: a Kubernetes List of one kind, exactly as the API server returns it from a list call. */

import { kindOf, kindTable } from "../kinds/descriptors.ts";
import { noPace, type Pace } from "../pace.ts";
import { isObject, typeName } from "../registry/check.ts";
import type { Result } from "./errors.ts";
import type { ResyncList } from "./resync.ts";
import { validateEventsPaced } from "./validate-paced.ts";

/**
 * Checks the list whole (paced: one item at a time); items may omit apiVersion and kind (list responses do), which are
 * filled from `kind`. A malformed item fails the list, named as `items[i]` and the field inside it; an item its
 * kind's rules refuse is listed in `rejected` and the rest stands.
 */
export async function validateList(
  kind: string,
  body: unknown,
  pace: Pace = noPace,
  watching?: string,
): Promise<Result<ResyncList>> {
  const known = kindOf(kind);
  if (!known) {
    return {
      ok: false,
      error: {
        field: "kind",
        message: `cannot resync kind ${JSON.stringify(kind)}; want one of ${kindTable.map((d) => d.kind).join(", ")}`,
      },
    };
  }
  if (!isObject(body))
    return { ok: false, error: { message: `a resync body is a List object, got ${typeName(body)}` } };
  if (body.kind !== undefined && body.kind !== `${kind}List`) {
    return {
      ok: false,
      error: { field: "kind", message: `${JSON.stringify(body.kind)} is not a ${kind}List` },
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
      item.apiVersion ??= known.apiVersions[0];
      item.kind ??= kind;
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
  const wrongKind = validated.value.findIndex((e) => e.type !== "BOOKMARK" && e.object.kind !== kind);
  if (wrongKind >= 0) {
    return {
      ok: false,
      error: { index: wrongKind, field: `items[${wrongKind}].kind`, message: `is not ${kind}` },
    };
  }
  const meta = isObject(body.metadata) ? body.metadata : {};
  return {
    ok: true,
    value: {
      kind,
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
