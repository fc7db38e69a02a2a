/**
 * AdmissionReview (admission.k8s.io/v1) in, the change it describes and the answer out, as istiod's
 * validating webhook answers (pkg/webhooks/validation/server): a CREATE or UPDATE of a kind the
 * webhook validates (lib/kinds/descriptors.ts) that fails its rules is denied with the field and
 * istiod's "configuration is invalid: ..."; anything else is allowed (the API server validates
 * Kubernetes' own kinds; a delete needs no validation) and delivered as a change.
 */
import { kindOf } from "../kinds/descriptors.ts";
import { isObject, typeName } from "../registry/check.ts";
import type { Result } from "./errors.ts";
import type { KubeObject, WatchEvent } from "./events.ts";
import { validateEvent } from "./validate.ts";

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
  const validated = validateEvent({ type, object: withNs });
  if (!validated.ok) {
    const inner = (validated.error.field ?? "").replace(/^object\.?/, "");
    return fail(inner ? `${field}.${inner}` : field, validated.error.message);
  }
  return { ok: true, value: { uid: req.uid, event: validated.value, dryRun } };
}

/** What the webhook answers in `response`. */
export interface AdmissionAnswer {
  uid: string;
  allowed: boolean;
  /** Why it was denied: HTTP-like code 400 and the message kubectl shows. */
  status?: { code: number; message: string };
  /** Shown by kubectl as `Warning: ...` (istiod's validation warnings). */
  warnings?: string[];
}

/**
 * Decides a decoded review: denied when the object is of a kind the webhook validates and its rules
 * refuse it; otherwise allowed, with `warnings(object)` for a validated kind's object.
 */
export function admissionAnswer(
  request: AdmissionRequest,
  warnings: (object: KubeObject) => string[] = () => [],
): AdmissionAnswer {
  const { uid, event } = request;
  if (event === undefined || event.type === "BOOKMARK" || event.type === "DELETED")
    return { uid, allowed: true };
  const validates = kindOf(event.object.kind)?.webhook === "validate";
  if (event.type === "REJECTED") {
    if (!validates) return { uid, allowed: true };
    const where = event.field ? `${event.field}: ` : "";
    return {
      uid,
      allowed: false,
      status: { code: 400, message: `configuration is invalid: ${where}${event.message}` },
    };
  }
  const found = validates ? warnings(event.object) : [];
  return found.length > 0 ? { uid, allowed: true, warnings: found } : { uid, allowed: true };
}

/** The AdmissionReview the API server expects back. */
export function admissionResponse(answer: AdmissionAnswer) {
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: answer };
}
