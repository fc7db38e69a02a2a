import { describe, expect, it } from "vitest";
import { admissionResponse, decodeAdmissionReview } from "../../../lib/ingest/index.ts";

const svc = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "r", namespace: "d" },
  spec: { ports: [{ port: 80 }] },
};
const review = (request: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "705ab4f5-6393-11e8-b7cc-42010a800002", operation: "CREATE", object: svc, ...request },
});

describe("decodeAdmissionReview", () => {
  const ok: [string, Record<string, unknown>, string | undefined, boolean][] = [
    ["CREATE ▶ ADDED", {}, "ADDED", false],
    ["UPDATE ▶ MODIFIED", { operation: "UPDATE", oldObject: svc }, "MODIFIED", false],
    [
      "DELETE ▶ DELETED from oldObject",
      { operation: "DELETE", object: null, oldObject: svc },
      "DELETED",
      false,
    ],
    ["CONNECT ▶ nothing to apply", { operation: "CONNECT", object: null }, undefined, false],
    ["dry run", { dryRun: true }, "ADDED", true],
  ];
  for (const [name, request, type, dryRun] of ok) {
    it(name, () => {
      const r = decodeAdmissionReview(review(request));
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      expect(r.value.uid).toBe("705ab4f5-6393-11e8-b7cc-42010a800002");
      expect(r.value.event?.type).toBe(type);
      expect(r.value.dryRun).toBe(dryRun);
    });
  }

  it("takes the namespace from the request when the object has none yet", () => {
    const r = decodeAdmissionReview(review({ namespace: "d", object: { ...svc, metadata: { name: "r" } } }));
    expect(r.ok && r.value.event?.type !== "BOOKMARK" && r.value.event?.object.metadata.namespace).toBe("d");
  });

  const bad: [string, unknown, string][] = [
    ["not a review", { kind: "Pod" }, "apiVersion"],
    ["no request", { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, "request"],
    ["no uid", review({ uid: "" }), "request.uid"],
    ["unknown operation", review({ operation: "PATCH" }), "request.operation"],
    ["DELETE without oldObject", review({ operation: "DELETE" }), "request.oldObject"],
    [
      "object without a name",
      review({ object: { ...svc, metadata: { namespace: "d" } } }),
      "request.object.metadata.name",
    ],
  ];
  for (const [name, body, field] of bad) {
    it(`rejects ${name}`, () =>
      expect(decodeAdmissionReview(body)).toMatchObject({ ok: false, error: { field } }));
  }

  it("answers allowed with the uid", () => {
    expect(admissionResponse({ uid: "u-1", allowed: true })).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true },
    });
  });
});
