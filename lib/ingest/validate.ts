/**
 * Whole-batch validation of watch events. Every event is checked before anything is applied;
 * the first problem names its event index and field.
 */

import { destinationRuleCheck } from "../registry/istio/validate-destination-rule.ts";
import { serviceEntryCheck } from "../registry/istio/validate-service-entry.ts";
import { sidecarCheck } from "../registry/istio/validate-sidecar.ts";
import { virtualServiceCheck } from "../registry/istio/validate-virtual-service.ts";
import { workloadEntryCheck } from "../registry/istio/validate-workload-entry.ts";
import { type Check, isObject, quote, typeName } from "./check.ts";
import type { IngestError, Result } from "./errors.ts";
import { eventTypes, type KubeObject, knownKinds, type WatchEvent } from "./events.ts";
import { dns1035Label } from "./names.ts";
import { endpointSliceCheck, endpointsCheck } from "./validate-endpoints.ts";
import { validateMeta } from "./validate-meta.ts";
import { podCheck } from "./validate-pod.ts";
import { serviceCheck } from "./validate-service.ts";

/**
 * The fields of the kinds we convert, checked as the API server checks them, and the Istio
 * networking kinds as istiod's validation webhook checks them. Node and Namespace are read only
 * for their metadata; other known kinds (Gateway) are checked for metadata only.
 */
const kindChecks: Readonly<Record<string, Check>> = {
  Service: serviceCheck,
  EndpointSlice: endpointSliceCheck,
  Endpoints: endpointsCheck,
  Pod: podCheck,
  VirtualService: virtualServiceCheck,
  DestinationRule: destinationRuleCheck,
  ServiceEntry: serviceEntryCheck,
  WorkloadEntry: workloadEntryCheck,
  Sidecar: sidecarCheck,
};

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
  const known = Object.hasOwn(knownKinds, kind) ? knownKinds[kind as keyof typeof knownKinds] : undefined;
  const served: readonly string[] | undefined = known?.apiVersions;
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
