import { describe, expect, it } from "vitest";
import { istioHost, selects, workloadSelector } from "../../../../lib/registry/istio/common.ts";
import { exportToCheck } from "../../../../lib/registry/istio/visibility.ts";

describe("istioHost (istiod ValidateWildcardDomain)", () => {
  it.each([
    ["*"],
    ["*.example.com"],
    ["*foo.com"],
    ["*-foo.example.com"],
    ["Foo.com"],
    ["reviews"],
    ["reviews.default.svc.cluster.local"],
    ["istio.io."],
  ])("accepts %s", (h) => expect(istioHost(h, "spec.hosts[0]")).toBeUndefined());
  it.each([
    ["", "empty domain name not allowed"],
    ["a..b", 'label "" invalid'],
    ["foo.*.com", 'label "*" invalid'],
    ["foo*.com", 'label "foo*" invalid'],
    ["example.123", "cannot be all-numeric"],
    ["x".repeat(256), "too long (max 255)"],
    [7, "must be a string"],
  ])("refuses %s", (h, why) => {
    const p = istioHost(h, "spec.hosts[0]");
    expect(p?.field).toBe("spec.hosts[0]");
    expect(p?.message).toContain(why);
  });
});

describe("exportToCheck (istiod validateExportTo)", () => {
  const vs = exportToCheck("shop");
  const se = exportToCheck("shop", { serviceEntry: true });
  it.each([[["."]], [["*"]], [["a", "."]], [["Shop2", "b"]]])("accepts %j", (v) =>
    expect(vs(v, "spec.exportTo")).toBeUndefined());
  it("accepts ~ alone for a ServiceEntry only", () => {
    expect(se(["~"], "e")).toBeUndefined();
    expect(vs(["~"], "e")).toEqual({
      field: "e[0]",
      message: expect.stringContaining("~ (none) is not allowed"),
    });
  });
  it.each([
    [["~", "a"], "spec.exportTo", "no one (~) and someone"],
    [["a", "a"], "spec.exportTo[1]", "duplicate entries in exportTo for entry a"],
    [[".", "shop"], "spec.exportTo[1]", "duplicate"],
    [["a_b"], "spec.exportTo[0]", "valid DNS 1123 label"],
    [["*", "."], "spec.exportTo", "both public (*) and non-public"],
    ["a", "spec.exportTo", "must be an array"],
  ])("refuses %j", (v, field, why) => {
    expect(se(v, "spec.exportTo")).toEqual({ field, message: expect.stringContaining(why) });
  });
  it("keeps a DestinationRule with a workload selector in its namespace", () => {
    const dr = exportToCheck("shop", { destinationRuleWithSelector: true });
    expect(dr(["."], "e")).toBeUndefined();
    expect(dr(["*"], "e")?.message).toContain("beyond current namespace");
    expect(dr([".", "b"], "e")?.message).toContain("multiple entries");
  });
});

describe("workloadSelector", () => {
  it("refuses empty keys, wildcards and values over 63 characters, as istiod and the CRD do", () => {
    expect(
      workloadSelector({ matchLabels: { app: "x", "-odd": "-x" } }, "spec.workloadSelector"),
    ).toBeUndefined();
    expect(workloadSelector({ matchLabels: { app: "x*" } }, "spec.workloadSelector")).toEqual({
      field: "spec.workloadSelector.matchLabels.app",
      message: expect.stringContaining("wildcard is not supported"),
    });
    expect(workloadSelector({ matchLabels: { app: "x".repeat(64) } }, "s")?.message).toContain("at most 63");
  });
  it("selects by every label; empty selects all", () => {
    expect(selects({ app: "a" }, { app: "a", v: "1" })).toBe(true);
    expect(selects({ app: "a", v: "2" }, { app: "a", v: "1" })).toBe(false);
    expect(selects({}, { app: "a" })).toBe(true);
  });
});
