/**
 * PeerAuthentication validation as istiod's webhook decides it: the cases of Istio's
 * TestValidatePeerAuthentication and its CRD test data (pkg/config/validation), translated to
 * objects as the API server sends them, plus the CRD's types and enums. Each refusal names its field.
 */
import { describe, expect, it } from "vitest";
import { strict, validateEvent } from "../../../../lib/ingest/validate.ts";
import { istioWarnings } from "../../../../lib/registry/istio/warnings.ts";

const policy = (spec: unknown, apiVersion = "security.istio.io/v1") => ({
  apiVersion,
  kind: "PeerAuthentication",
  metadata: { name: "default", namespace: "foo", resourceVersion: "1" },
  ...(spec !== undefined && { spec }),
});

const verdict = (obj: Record<string, unknown>) => {
  const r = strict(validateEvent({ type: "ADDED", object: obj }));
  return r.ok ? "valid" : `${r.error.field}: ${r.error.message}`;
};

const httpbin = { matchLabels: { app: "httpbin" } };

describe("PeerAuthentication validation (istiod's ValidatePeerAuthentication)", () => {
  it.each([
    ["empty spec", {}],
    ["no spec at all", undefined],
    ["empty mtls with selector of empty labels", { selector: {} }],
    ["default name with non empty selector", { selector: httpbin }],
    ["unset mode", { mtls: { mode: "UNSET" } }],
    ["strict mode", { mtls: { mode: "STRICT" } }],
    ["port level", { selector: httpbin, portLevelMtls: { "8080": { mode: "UNSET" } } }],
    [
      "port level of every mode, bounds included",
      {
        selector: httpbin,
        mtls: { mode: "PERMISSIVE" },
        portLevelMtls: { "1": { mode: "DISABLE" }, "65535": { mode: "STRICT" }, "9000": {} },
      },
    ],
  ])("accepts %s", (_, spec) => expect(verdict(policy(spec))).toBe("valid"));

  it("accepts v1beta1, the same spec", () =>
    expect(verdict(policy({ mtls: { mode: "STRICT" } }, "security.istio.io/v1beta1"))).toBe("valid"));

  it.each([
    [
      "empty port level mtls",
      { selector: httpbin, portLevelMtls: {} },
      "object.spec.portLevelMtls: port level mTLS, if defined, must have at least one element",
    ],
    [
      "empty selector with port level mtls",
      { portLevelMtls: { "8080": { mode: "UNSET" } } },
      "object.spec.portLevelMtls: mesh/namespace peer authentication cannot have port level mTLS",
    ],
    [
      "a selector without labels and port level mtls",
      { selector: { matchLabels: {} }, portLevelMtls: { "8080": { mode: "STRICT" } } },
      "object.spec.portLevelMtls: mesh/namespace peer authentication cannot have port level mTLS",
    ],
    [
      "port 0",
      { selector: httpbin, portLevelMtls: { "0": { mode: "UNSET" } } },
      'object.spec.portLevelMtls["0"]: port must be in range 1..65535',
    ],
    [
      "port 65536",
      { selector: httpbin, portLevelMtls: { "65536": { mode: "STRICT" } } },
      'object.spec.portLevelMtls["65536"]: port must be in range 1..65535',
    ],
    [
      "a port that is no number",
      { selector: httpbin, portLevelMtls: { http: { mode: "STRICT" } } },
      "object.spec.portLevelMtls.http: port must be in range 1..65535",
    ],
    [
      "an unknown mode",
      { mtls: { mode: "MUTUAL" } },
      'object.spec.mtls.mode: unsupported value "MUTUAL"; want one of UNSET, DISABLE, PERMISSIVE, STRICT',
    ],
    [
      "an unknown port mode",
      { selector: httpbin, portLevelMtls: { "8080": { mode: "strict" } } },
      'object.spec.portLevelMtls["8080"].mode: unsupported value "strict"; want one of UNSET, DISABLE, PERMISSIVE, STRICT',
    ],
    [
      "a selector with an empty key",
      { selector: { matchLabels: { "": "v1" } } },
      'object.spec.selector.matchLabels[""]: empty key is not supported in selector: "=v1"',
    ],
    [
      "a selector with a wildcard value",
      { selector: { matchLabels: { app: "httpbin-*" } } },
      'object.spec.selector.matchLabels.app: wildcard is not supported in selector: "app=httpbin-*"',
    ],
    ["a spec that is a list", [], "object.spec: must be an object, got array"],
    ["mtls that is a string", { mtls: "STRICT" }, "object.spec.mtls: must be an object, got string"],
  ])("refuses %s", (_, spec, want) => expect(verdict(policy(spec))).toBe(want));

  it("refuses a version its group does not serve", () =>
    expect(verdict(policy({}, "security.istio.io/v1alpha3"))).toMatch(/^object\.apiVersion: .*not served/));

  it("takes one under the networking group for another API's kind: never checked or handled as a PeerAuthentication", () => {
    const r = validateEvent({ type: "ADDED", object: policy({ mtls: "STRICT" }, "networking.istio.io/v1") });
    expect(r.ok && r.value.type === "ADDED" && r.value.object.kind).toBe(
      "networking.istio.io/v1 PeerAuthentication",
    );
  });

  it("refuses the dry-run annotation, which only AuthorizationPolicy takes", () => {
    const obj = policy({});
    (obj.metadata as Record<string, unknown>).annotations = { "istio.io/dry-run": "true" };
    expect(verdict(obj)).toBe(
      'object.metadata.annotations["istio.io/dry-run"]: foo/default has unsupported annotation istio.io/dry-run, please remove the annotation',
    );
  });

  it.each([
    [
      "a selector without labels",
      { selector: {} },
      ["spec.selector: workload selector specified without labels"],
    ],
    ["a selector with labels", { selector: httpbin }, []],
    ["no selector", { mtls: { mode: "STRICT" } }, []],
  ])("warns as istiod for %s", (_, spec, want) =>
    expect(istioWarnings("PeerAuthentication", policy(spec))).toEqual(want));
});
