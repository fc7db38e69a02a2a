/**
 * The security.istio.io kinds over real HTTP against the Node runtime: the admission webhook denies
 * an invalid PeerAuthentication or AuthorizationPolicy with istiod's message (allowed: false, never
 * an HTTP error) and allows a valid one with istiod's warnings; a watch batch holding an invalid
 * policy skips and reports it while the rest applies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { event } from "./support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

let cp: RunningControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
});
afterAll(async () => {
  await cp?.stop();
});

const policy = (kind: string, name: string, spec: unknown, apiVersion = "security.istio.io/v1") => ({
  apiVersion,
  kind,
  metadata: { name, namespace: "default", resourceVersion: "1" },
  spec,
});
const admit = async (object: unknown) => {
  const res = await fetch(`http://127.0.0.1:${cp.port}/v1/admission/Kubernetes`, {
    method: "POST",
    headers: { authorization: `Bearer ${cp.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "uid-1", operation: "CREATE", object },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { response: Record<string, unknown> }).response;
};

describe("the admission webhook", () => {
  it.each([
    [
      "a namespace-wide PeerAuthentication with port-level mTLS",
      policy("PeerAuthentication", "default", { portLevelMtls: { "8080": { mode: "DISABLE" } } }),
      "configuration is invalid: spec.portLevelMtls: mesh/namespace peer authentication cannot have port level mTLS",
    ],
    [
      "a CUSTOM AuthorizationPolicy without a provider (v1beta1)",
      policy("AuthorizationPolicy", "ext", { action: "CUSTOM", rules: [{}] }, "security.istio.io/v1beta1"),
      "configuration is invalid: spec.provider.name: `provider.name` must not be empty",
    ],
  ])("denies %s with istiod's message", async (_, object, message) => {
    expect(await admit(object)).toEqual({ uid: "uid-1", allowed: false, status: { code: 400, message } });
  });

  it("allows a valid DENY of HTTP attributes only, with istiod's warning", async () => {
    const deny = policy("AuthorizationPolicy", "deny-get", {
      action: "DENY",
      rules: [{ to: [{ operation: { methods: ["GET"] } }] }],
    });
    const response = await admit(deny);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringMatching(/will deny all traffic to TCP ports under its scope/),
    ]);
  });
});

describe("a watch batch", () => {
  it("skips and reports an invalid policy; the rest applies", async () => {
    const res = await cp.post([
      event("ADDED", policy("PeerAuthentication", "strict", { mtls: { mode: "STRICT" } })),
      event(
        "ADDED",
        policy("AuthorizationPolicy", "bad-ip", {
          rules: [{ from: [{ source: { ipBlocks: ["10.0.0.0/33"] } }] }],
        }),
      ),
    ]);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { applied: number; rejected: unknown[] };
    expect(answer.applied).toBe(1);
    expect(answer.rejected).toEqual([
      expect.objectContaining({
        index: 1,
        kind: "AuthorizationPolicy",
        name: "bad-ip",
        field: "spec.rules[0].from[0].source.ipBlocks[0]",
        message: expect.stringMatching(/^bad CIDR range \(10\.0\.0\.0\/33\): .*prefix length out of range$/),
      }),
    ]);
  });
});
