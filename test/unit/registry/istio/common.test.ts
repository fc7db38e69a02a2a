import { describe, expect, it } from "vitest";
import { exportTo, istioHost, selects, workloadSelector } from "../../../../lib/registry/istio/common.ts";

describe("istioHost", () => {
  it.each([
    ["*"],
    ["*.example.com"],
    ["reviews"],
    ["reviews.default.svc.cluster.local"],
    ["istio.io."],
  ])("accepts %s", (h) => expect(istioHost(h, "spec.hosts[0]")).toBeUndefined());
  it.each([
    ["", "must not be empty"],
    ["a..b", "must not be empty"],
    ["*foo.com", "RFC 1123"],
    ["Foo.com", "RFC 1123"],
    ["example.123", "all digits"],
    ["x".repeat(256), "longer than 255"],
    [7, "must be a string"],
  ])("refuses %s", (h, why) => {
    const p = istioHost(h, "spec.hosts[0]");
    expect(p?.field).toBe("spec.hosts[0]");
    expect(p?.message).toContain(why);
  });
});

describe("exportTo", () => {
  it.each([[["."]], [["*"]], [["~"]], [["a", "."]]])("accepts %j", (v) =>
    expect(exportTo(v, "spec.exportTo")).toBeUndefined());
  it.each([
    [["~", "a"], "spec.exportTo[0]", "cannot be combined"],
    [["a", "a"], "spec.exportTo[1]", "duplicate"],
    [["A"], "spec.exportTo[0]", "namespace name"],
    ["a", "spec.exportTo", "must be an array"],
  ])("refuses %j", (v, field, why) => {
    expect(exportTo(v, "spec.exportTo")).toEqual({ field, message: expect.stringContaining(why) });
  });
});

describe("workloadSelector", () => {
  it("checks label keys and values, naming the label", () => {
    expect(workloadSelector({ matchLabels: { app: "x" } }, "spec.workloadSelector")).toBeUndefined();
    expect(workloadSelector({ matchLabels: { app: "-x" } }, "spec.workloadSelector")).toEqual({
      field: "spec.workloadSelector.matchLabels.app",
      message: expect.stringContaining("label value"),
    });
  });
  it("selects by every label; empty selects all", () => {
    expect(selects({ app: "a" }, { app: "a", v: "1" })).toBe(true);
    expect(selects({ app: "a", v: "2" }, { app: "a", v: "1" })).toBe(false);
    expect(selects({}, { app: "a" })).toBe(true);
  });
});
