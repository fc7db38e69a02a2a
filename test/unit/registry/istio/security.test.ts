import { describe, expect, it } from "vitest";
import {
  type AuthorizationPolicyModel,
  authorizationFor,
  composePeerAuthentication,
  type PeerAuthenticationModel,
  toAuthorizationPolicy,
  toPeerAuthentication,
} from "../../../../lib/registry/istio/security.ts";

const root = "istio-system";
const pa = (o: Partial<PeerAuthenticationModel> & { namespace: string }): PeerAuthenticationModel => ({
  name: "p",
  mode: "UNSET",
  ...o,
});
const app = { namespace: "app", labels: { app: "a" } };

describe("composePeerAuthentication (istiod's ComposePeerAuthentication)", () => {
  it.each([
    ["no policy: PERMISSIVE", [], { mode: "PERMISSIVE" }],
    ["mesh STRICT", [pa({ namespace: root, mode: "STRICT" })], { mode: "STRICT" }],
    [
      "namespace DISABLE over mesh STRICT",
      [pa({ namespace: root, mode: "STRICT" }), pa({ namespace: "app", mode: "DISABLE" })],
      { mode: "DISABLE" },
    ],
    [
      "namespace UNSET inherits the mesh's",
      [pa({ namespace: root, mode: "STRICT" }), pa({ namespace: "app" })],
      { mode: "STRICT" },
    ],
    [
      "workload over namespace, port-level UNSET inherits the workload's",
      [
        pa({ namespace: "app", mode: "STRICT" }),
        pa({
          namespace: "app",
          name: "w",
          selector: { app: "a" },
          mode: "PERMISSIVE",
          portLevelMtls: { 8080: "STRICT", 9090: "UNSET" },
        }),
      ],
      { mode: "PERMISSIVE", perPort: { 8080: "STRICT", 9090: "PERMISSIVE" } },
    ],
    [
      "a selector that does not match, another namespace's policy, a root selector policy: ignored",
      [
        pa({ namespace: "app", selector: { app: "b" }, mode: "STRICT" }),
        pa({ namespace: "other", mode: "STRICT" }),
        pa({ namespace: root, selector: { app: "a" }, mode: "STRICT" }),
      ],
      { mode: "PERMISSIVE" },
    ],
    [
      "the oldest namespace policy wins",
      [
        pa({ namespace: "app", name: "new", mode: "DISABLE", creationTimestamp: "2026-02-01T00:00:00Z" }),
        pa({ namespace: "app", name: "old", mode: "STRICT", creationTimestamp: "2026-01-01T00:00:00Z" }),
      ],
      { mode: "STRICT" },
    ],
  ] as [string, PeerAuthenticationModel[], object][])("%s", (_, policies, want) => {
    expect(composePeerAuthentication(policies, app, root)).toEqual(want);
  });
});

describe("authorizationFor (istiod's ListAuthorizationPolicies)", () => {
  const ap = (
    o: Partial<AuthorizationPolicyModel> & { name: string; namespace: string },
  ): AuthorizationPolicyModel => ({
    action: "ALLOW",
    rules: [],
    ...o,
  });
  it("takes the root and the workload's namespace, selected ones, by action; never a targeted one", () => {
    const got = authorizationFor(
      [
        ap({ name: "mesh-deny", namespace: root, action: "DENY" }),
        ap({ name: "ns-allow", namespace: "app" }),
        ap({ name: "sel-audit", namespace: "app", selector: { app: "a" }, action: "AUDIT" }),
        ap({ name: "sel-other", namespace: "app", selector: { app: "b" } }),
        ap({ name: "elsewhere", namespace: "other" }),
        ap({ name: "targeted", namespace: "app", targeted: true }),
        ap({ name: "ext", namespace: "app", action: "CUSTOM", provider: "opa" }),
      ],
      app,
      root,
    );
    const names = (l: readonly AuthorizationPolicyModel[]) => l.map((p) => p.name);
    expect({
      custom: names(got.custom),
      deny: names(got.deny),
      allow: names(got.allow),
      audit: names(got.audit),
    }).toEqual({ custom: ["ext"], deny: ["mesh-deny"], allow: ["ns-allow"], audit: ["sel-audit"] });
  });
});

describe("the models of validated specs", () => {
  it("PeerAuthentication: selector, mode, port levels", () => {
    expect(
      toPeerAuthentication(
        { name: "p", namespace: "app" },
        {
          selector: { matchLabels: { app: "a" } },
          mtls: { mode: "STRICT" },
          portLevelMtls: { "8080": { mode: "DISABLE" } },
        },
      ),
    ).toEqual({
      name: "p",
      namespace: "app",
      selector: { app: "a" },
      mode: "STRICT",
      portLevelMtls: { 8080: "DISABLE" },
    });
    expect(toPeerAuthentication({ name: "p", namespace: "app" }, {})).toEqual({
      name: "p",
      namespace: "app",
      mode: "UNSET",
    });
  });
  it("AuthorizationPolicy: ALLOW by default, no rules when absent, targetRefs mark it targeted", () => {
    expect(toAuthorizationPolicy({ name: "a", namespace: "app" }, {})).toEqual({
      name: "a",
      namespace: "app",
      action: "ALLOW",
      rules: [],
    });
    expect(
      toAuthorizationPolicy(
        { name: "a", namespace: "app" },
        {
          action: "CUSTOM",
          provider: { name: "opa" },
          targetRefs: [{ kind: "Gateway", name: "g" }],
          rules: [{}],
        },
      ),
    ).toEqual({
      name: "a",
      namespace: "app",
      action: "CUSTOM",
      provider: "opa",
      targeted: true,
      rules: [{}],
    });
  });
});
