import { describe, expect, it } from "vitest";
import { networkingWorkloadSelector, selectorLabels } from "../../../../lib/registry/istio/common.ts";
import { exportToCheck } from "../../../../lib/registry/istio/visibility.ts";

describe("networkingWorkloadSelector (istiod ValidateAlphaWorkloadSelector)", () => {
  it.each([[{}], [{ labels: {} }], [{ labels: { app: "a", "x.io/v": "1" } }]])("accepts %j", (v) =>
    expect(networkingWorkloadSelector(v, "s")).toBeUndefined());
  it.each([
    [{ labels: { "": "a" } }, 's.labels[""]', "empty key"],
    [{ labels: { "a*": "a" } }, 's.labels["a*"]', "wildcard"],
    [{ labels: { a: "*" } }, "s.labels.a", "wildcard"],
    [{ labels: { a: 1 } }, "s.labels.a", "must be a string"],
    [{ labels: [] }, "s.labels", "must be an object"],
    [[], "s", "must be an object"],
  ])("refuses %j", (v, field, why) => {
    const p = networkingWorkloadSelector(v, "s");
    expect(p?.message).toContain(why);
    expect(p?.field).toBe(field);
  });
  it("reads the labels of a selector; none without a selector", () => {
    expect(selectorLabels({ labels: { a: "b" } })).toEqual({ a: "b" });
    expect(selectorLabels({})).toEqual({});
    expect(selectorLabels(undefined)).toBeUndefined();
    expect(selectorLabels(null)).toBeUndefined();
  });
});

describe("exportToCheck for a ServiceEntry (istiod validateExportTo)", () => {
  const check = exportToCheck("shop", { serviceEntry: true });
  it.each([[["."]], [["*"]], [["~"]], [[".", "b"]], [["shop", "b"]]])("accepts %j in shop", (v) =>
    expect(check(v, "e")).toBeUndefined());
  it.each([
    [[".", "shop"], "e[1]", "duplicate"],
    [["*", "."], "e", "public"],
    [["b", "*"], "e", "public"],
    [["a", "a"], "e[1]", "duplicate"],
  ])("refuses %j in shop", (v, field, why) =>
    expect(check(v, "e")).toEqual({ field, message: expect.stringContaining(why) }));
});
