import { describe, expect, it } from "vitest";
import {
  exportedTo,
  hostMatches,
  hostSubsetOf,
  mostSpecificHostMatch,
  resolveHost,
} from "../../../../lib/registry/istio/visibility.ts";

describe("resolveHost (ResolveShortnameToFQDN)", () => {
  it.each([
    ["reviews", "reviews.prod.svc.cluster.local"],
    ["reviews.other", "reviews.other"],
    ["*", "*"],
    ["*.example.com", "*.example.com"],
    ["10.1.2.3", "10.1.2.3"],
    ["2001:db8::1", "2001:db8::1"],
  ])("%s ▶ %s", (h, want) => expect(resolveHost(h, "prod", "cluster.local")).toBe(want));
});

describe("host matching (pkg/config/host)", () => {
  it.each([
    ["a.example.com", "a.example.com", true, true],
    ["a.example.com", "*.example.com", true, true],
    ["*.example.com", "a.example.com", true, false],
    ["*.a.example.com", "*.example.com", true, true],
    ["example.com", "*.example.com", false, false],
    ["a.example.com", "*", true, true],
    ["a.example.com", "b.example.com", false, false],
  ])("%s vs %s: matches %s, subset %s", (a, b, matches, subset) => {
    expect(hostMatches(a, b)).toBe(matches);
    expect(hostSubsetOf(a, b)).toBe(subset);
  });

  it.each([
    ["a.b.example.com", "exact", "a.b.example.com"],
    ["x.b.example.com", "narrow", "*.b.example.com"],
    ["x.example.com", "broad", "*.example.com"],
    ["x.other.com", "all", "*"],
  ])("most specific for %s is %s", (needle, value, host) => {
    const specific = new Map([["a.b.example.com", "exact"]]);
    const wildcard = new Map([
      ["*", "all"],
      ["*.example.com", "broad"],
      ["*.b.example.com", "narrow"],
    ]);
    expect(mostSpecificHostMatch(needle, specific, wildcard)).toEqual({ host, value });
  });
});

describe("exportedTo", () => {
  it.each([
    [undefined, "a", "b", true],
    [[], "a", "b", true],
    [["*"], "a", "b", true],
    [["."], "a", "a", true],
    [["."], "a", "b", false],
    [["b"], "a", "b", true],
    [["c"], "a", "b", false],
    [["~"], "a", "a", false],
  ])("%j from %s to %s: %s", (exportTo, from, to, want) => expect(exportedTo(exportTo, from, to)).toBe(want));
});
