/**
 * AdmissionReview (admission.k8s.io/v1) in, the change it describes out. The webhook always
 * allows: edgepilot observes changes, it never blocks them.
 */
import { isObject, typeName } from "./check.ts";
import type { Result } from "./errors.ts";
import type { WatchEvent } from "./events.ts";
import { validateEvents } from "./validate.ts";

/** What a review asks: its uid (echoed back), the event to apply (none for CONNECT), and whether it is a dry run. */
export interface AdmissionRequest {
  uid: string;
  event: WatchEvent | undefined;
  dryRun: boolean;
}

const operations: Record<string, "ADDED" | "MODIFIED" | "DELETED" | undefined> = {
  CREATE: "ADDED",
  UPDATE: "MODIFIED",
  DELETE: "DELETED",
  CONNECT: undefined,
};

/** Decodes and validates a review; the object is validated as a watch event's would be. */
export function decodeAdmissionReview(body: unknown): Result<AdmissionRequest> {
  const fail = (field: string, message: string): Result<AdmissionRequest> => ({
    ok: false,
    error: { field, message },
  });
  if (!isObject(body)) return fail("", `an AdmissionReview must be an object, got ${typeName(body)}`);
  if (body.apiVersion !== "admission.k8s.io/v1" || body.kind !== "AdmissionReview") {
    return fail(
      "apiVersion",
      `want apiVersion admission.k8s.io/v1 and kind AdmissionReview, got ${JSON.stringify(body.apiVersion)} ${JSON.stringify(body.kind)}`,
    );
  }
  const req = body.request;
  if (!isObject(req)) return fail("request", `must be an object, got ${typeName(req)}`);
  if (typeof req.uid !== "string" || req.uid === "") return fail("request.uid", "is required");
  if (typeof req.operation !== "string" || !(req.operation in operations)) {
    return fail(
      "request.operation",
      `unknown operation ${JSON.stringify(req.operation)}; want CREATE, UPDATE, DELETE or CONNECT`,
    );
  }
  const type = operations[req.operation];
  const dryRun = req.dryRun === true;
  if (type === undefined) return { ok: true, value: { uid: req.uid, event: undefined, dryRun } };
  const field = type === "DELETED" ? "request.oldObject" : "request.object";
  const object = type === "DELETED" ? req.oldObject : req.object;
  if (!isObject(object)) return fail(field, `is required for ${req.operation}, got ${typeName(object)}`);
  // The API server sets metadata.namespace on namespaced objects only after defaulting; the request names it.
  const meta = isObject(object.metadata) ? object.metadata : {};
  const withNs =
    typeof req.namespace === "string" && req.namespace !== "" && meta.namespace === undefined
      ? { ...object, metadata: { ...meta, namespace: req.namespace } }
      : object;
  const validated = validateEvents([{ type, object: withNs }]);
  if (!validated.ok) {
    const inner = (validated.error.field ?? "").replace(/^object\.?/, "");
    return fail(inner ? `${field}.${inner}` : field, validated.error.message);
  }
  return { ok: true, value: { uid: req.uid, event: validated.value[0], dryRun } };
}

/** The answer the API server expects: allowed, with the request's uid. */
export function admissionResponse(uid: string) {
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } };
}
