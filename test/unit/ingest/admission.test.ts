import { describe, expect, it } from "vitest";
import { admissionAnswer, admissionResponse, decodeAdmissionReview } from "../../../lib/ingest/index.ts";
import { istioWarnings } from "../../../lib/registry/istio/warnings.ts";
import { listAll } from "../../../lib/store/store.ts";
import { ingestApp } from "./support/ingest-app.ts";
import { serviceEntry, virtualService } from "./support/istio.ts";

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

const goodRoute = virtualService("reviews", { http: [{ route: [{ destination: { host: "reviews" } }] }] });
const badRoute = virtualService("reviews", {
  http: [{ route: [{ destination: { host: "reviews" }, weight: -1 }] }],
});

describe("admissionAnswer, as istiod's validating webhook answers", () => {
  const answer = (request: Record<string, unknown>) => {
    const r = decodeAdmissionReview(review(request));
    if (!r.ok) throw new Error(r.error.message);
    return admissionAnswer(r.value, () => ["a warning"]);
  };

  it("denies an invalid Istio config with code 400 and the field, in istiod's words", () => {
    expect(answer({ object: badRoute })).toEqual({
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      allowed: false,
      status: {
        code: 400,
        message: expect.stringMatching(/^configuration is invalid: spec\.http\[0\]\.route\[0\]\.weight: /),
      },
    });
    expect(answer({ operation: "UPDATE", object: badRoute, oldObject: badRoute }).allowed).toBe(false);
  });

  it("allows a valid Istio config with its warnings", () => {
    expect(answer({ object: goodRoute })).toMatchObject({
      allowed: true,
      warnings: ["a warning"],
    });
  });

  it("allows deleting an invalid Istio config (istiod validates CREATE and UPDATE only)", () => {
    expect(answer({ operation: "DELETE", object: null, oldObject: badRoute })).toMatchObject({
      allowed: true,
    });
  });

  it("denies an invalid Istio Gateway in istiod's words, and allows a valid one with istiod's warnings", () => {
    const gw = (servers: unknown[]) => ({
      apiVersion: "networking.istio.io/v1",
      kind: "Gateway",
      metadata: { name: "ingress", namespace: "d" },
      spec: { selector: { istio: "ingressgateway" }, servers },
    });
    const decide = (object: unknown) => {
      const r = decodeAdmissionReview(review({ object }));
      if (!r.ok) throw new Error(r.error.message);
      return admissionAnswer(r.value, (o) => istioWarnings(o.kind, o));
    };
    const https = { number: 443, name: "https", protocol: "HTTPS" };
    expect(decide(gw([{ port: https, hosts: ["shop.example.com"] }]))).toMatchObject({
      allowed: false,
      status: {
        code: 400,
        message:
          "configuration is invalid: spec.servers[0].tls: server must have TLS settings for HTTPS/TLS protocols",
      },
    });
    const redirect = { httpsRedirect: true, mode: "SIMPLE", credentialName: "shop-cert" };
    expect(decide(gw([{ port: https, hosts: ["shop.example.com"], tls: redirect }]))).toEqual({
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      allowed: true,
      warnings: [
        "spec.servers[0].tls.httpsRedirect: tls.httpsRedirect should only be used with http servers",
      ],
    });
  });

  it("always allows a Kubernetes kind, even one edgepilot refuses (the API server validates it)", () => {
    const bad = { ...svc, spec: { ports: [{ port: 70000 }] } };
    expect(answer({ object: bad })).toEqual({ uid: "705ab4f5-6393-11e8-b7cc-42010a800002", allowed: true });
  });
});

describe("POST /v1/admission", () => {
  const setup = () => {
    const { store, lines, post: send } = ingestApp();
    const post = async (body: unknown) => {
      const r = await send("/v1/admission/east", body);
      return r as { status: number; body: { response: Record<string, unknown> } };
    };
    return { store, lines, post };
  };

  it("answers 200 allowed: false for an invalid VirtualService and stores nothing", async () => {
    const { store, lines, post } = setup();
    const r = await post(review({ object: badRoute }));
    expect(r.status).toBe(200);
    expect(r.body.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(await listAll(store, "")).toEqual([]);
    expect(lines.filter((l) => l.includes("admission denied VirtualService default/reviews"))).toHaveLength(
      1,
    );
  });

  it("applies an allowed change, and nothing of a dry run", async () => {
    const { store, post } = setup();
    expect((await post(review({ object: goodRoute, dryRun: true }))).body.response).toMatchObject({
      allowed: true,
    });
    expect(await listAll(store, "cfg/")).toEqual([]);
    await post(review({ object: goodRoute }));
    expect((await listAll(store, "cfg/")).map((e) => e.key)).toEqual([
      "cfg/VirtualService/default/reviews/east",
    ]);
  });

  it("allows a partial wildcard host with istiod's warning", async () => {
    const { post } = setup();
    const wildcard = serviceEntry("news", {
      hosts: ["*washingtonpost.com"],
      location: "MESH_EXTERNAL",
      resolution: "NONE",
      ports: [{ name: "https", number: 443, protocol: "TLS" }],
    });
    const { response } = (await post(review({ object: wildcard }))).body;
    expect(response).toMatchObject({ allowed: true });
    expect(response.warnings).toEqual([
      expect.stringMatching(/partial wildcard "\*washingtonpost\.com" not allowed/),
    ]);
  });

  it("a body that is no AdmissionReview is still a 400", async () => {
    const { post } = setup();
    expect((await post({ kind: "Pod" })).status).toBe(400);
  });
});
