import { describe, expect, it } from "vitest";
import {
  createDestinationRuleIndex,
  type DestinationRuleModel,
  effectivePolicy,
  findSubset,
  routeConsistentHash,
  toDestinationRule,
} from "../../../../lib/registry/istio/destination-rule.ts";
import { destinationRule } from "./builders.ts";

const host = "reviews.prod.svc.cluster.local";
let seq = 0;
/** A DestinationRule for reviews.prod in `namespace`, created `seq` seconds after the first. */
function dr(namespace: string, spec: Record<string, unknown> = {}, name = `dr${seq}`): DestinationRuleModel {
  const created = new Date(Date.UTC(2026, 0, 1, 0, 0, seq++)).toISOString();
  return toDestinationRule(
    { name, namespace, creationTimestamp: created },
    destinationRule({ host, subsets: [], ...spec }).spec,
    "cluster.local",
  );
}
const index = (...rules: DestinationRuleModel[]) =>
  createDestinationRuleIndex(rules, { rootNamespace: "istio-system" });
const from = (r: ReturnType<ReturnType<typeof index>["forService"]>) =>
  r?.from.map((f) => `${f.namespace}/${f.name}`);

describe("toDestinationRule", () => {
  it("resolves a short host in the rule's namespace and sorts subset labels", () => {
    const m = toDestinationRule(
      { name: "r", namespace: "prod" },
      destinationRule({ subsets: [{ name: "v1", labels: { z: "1", a: "2" } }] }).spec,
      "cluster.local",
    );
    expect(m.host).toBe(host);
    expect(Object.keys(findSubset(m, "v1")?.labels ?? {})).toEqual(["a", "z"]);
    expect(findSubset(m, "v9")).toBeUndefined();
  });
  it("gives each (port, subset) cluster its merged policy", () => {
    const m = dr("prod", {
      trafficPolicy: {
        loadBalancer: { simple: "ROUND_ROBIN" },
        connectionPool: { http: { http2MaxRequests: 10 } },
      },
      subsets: [
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
        },
      ],
    });
    expect(effectivePolicy(m, 9080)).toEqual({
      loadBalancer: { simple: "ROUND_ROBIN" },
      connectionPool: { http2MaxRequests: 10 },
    });
    expect(effectivePolicy(m, 9080, "v2")).toEqual({
      loadBalancer: { consistentHash: { httpHeaderName: "x-user", algorithm: "ringHash" } },
      connectionPool: { http2MaxRequests: 10 },
    });
    expect(effectivePolicy(undefined, 9080)).toBeUndefined();
  });
});

describe("createDestinationRuleIndex: which rule a proxy namespace gets", () => {
  it.each([
    [
      "the proxy's namespace first",
      () => [dr("prod", {}, "svc-ns"), dr("client", {}, "own")],
      "client",
      ["client/own"],
    ],
    [
      "then the service's namespace",
      () => [dr("prod", {}, "svc-ns"), dr("istio-system", {}, "root")],
      "client",
      ["prod/svc-ns"],
    ],
    ["then the root namespace", () => [dr("istio-system", {}, "root")], "client", ["istio-system/root"]],
    [
      "a rule exported elsewhere is skipped",
      () => [dr("prod", { exportTo: ["other"] }, "x"), dr("istio-system", {}, "root")],
      "client",
      ["istio-system/root"],
    ],
    [
      "a rule exported to the proxy's namespace applies",
      () => [dr("prod", { exportTo: ["client"] }, "x")],
      "client",
      ["prod/x"],
    ],
    [
      "a private rule applies only in its namespace",
      () => [dr("prod", { exportTo: ["."] }, "x")],
      "client",
      undefined,
    ],
    [
      "a private rule applies in its namespace",
      () => [dr("prod", { exportTo: ["."] }, "x")],
      "prod",
      ["prod/x"],
    ],
    [
      "a private root rule applies to root proxies",
      () => [dr("istio-system", { exportTo: ["."] }, "x")],
      "istio-system",
      ["istio-system/x"],
    ],
    [
      "an exact host beats a wildcard",
      () => [dr("client", { host: "*.prod.svc.cluster.local" }, "wild"), dr("client", {}, "exact")],
      "client",
      ["client/exact"],
    ],
    [
      "the most specific wildcard wins",
      () => [
        dr("client", { host: "*.svc.cluster.local" }, "broad"),
        dr("client", { host: "*.prod.svc.cluster.local" }, "narrow"),
      ],
      "client",
      ["client/narrow"],
    ],
    [
      "rules with a workload selector are not applied",
      () => [dr("client", { workloadSelector: { matchLabels: { app: "a" } } }, "sel")],
      "client",
      undefined,
    ],
    [
      "same namespace, same exportTo: merged, oldest first",
      () => [dr("client", {}, "a"), dr("client", {}, "b")],
      "client",
      ["client/a", "client/b"],
    ],
    [
      "a superset exportTo merges into the older",
      () => [dr("client", { exportTo: ["client"] }, "a"), dr("client", { exportTo: ["client", "x"] }, "b")],
      "client",
      ["client/a", "client/b"],
    ],
    [
      "a different exportTo stays separate; the last wins",
      () => [dr("client", { exportTo: ["*"] }, "a"), dr("client", { exportTo: ["."] }, "b")],
      "client",
      ["client/b"],
    ],
  ])("%s", (_, rules, proxyNs, want) =>
    expect(from(index(...rules()).forService(proxyNs, host, "prod"))).toEqual(want));

  it("a merge keeps the older rule's policy and subsets, adds new subset names only", () => {
    const a = dr(
      "client",
      {
        trafficPolicy: { loadBalancer: { simple: "RANDOM" } },
        subsets: [{ name: "v1", labels: { v: "1" } }],
      },
      "a",
    );
    const b = dr(
      "client",
      {
        trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
        subsets: [
          { name: "v1", labels: { v: "other" } },
          { name: "v2", labels: { v: "2" } },
        ],
      },
      "b",
    );
    const got = index(b, a).forService("client", host, "prod")?.rule;
    expect(got?.trafficPolicy?.loadBalancer).toEqual({ simple: "RANDOM" });
    expect(got?.subsets.map((s) => [s.name, s.labels.v])).toEqual([
      ["v1", "1"],
      ["v2", "2"],
    ]);
    expect(a.subsets).toHaveLength(1); // inputs are not mutated
  });

  it("a later rule fills in a missing top-level policy", () => {
    const a = dr("client", {}, "a");
    const b = dr("client", { trafficPolicy: { loadBalancer: { simple: "RANDOM" } } }, "b");
    expect(index(a, b).forService("client", host, "prod")?.rule.trafficPolicy?.loadBalancer).toEqual({
      simple: "RANDOM",
    });
  });
});

describe("routeConsistentHash (hashForHTTPDestination)", () => {
  const ch = (h: string) => ({ loadBalancer: { consistentHash: { httpHeaderName: h } } });
  const m = dr("prod", {
    trafficPolicy: { ...ch("top"), portLevelSettings: [{ port: { number: 9080 }, ...ch("port") }] },
    subsets: [
      {
        name: "v1",
        trafficPolicy: {
          ...ch("subset"),
          portLevelSettings: [{ port: { number: 9080 }, ...ch("subset-port") }],
        },
      },
      { name: "v2", trafficPolicy: { loadBalancer: { simple: "RANDOM" } } },
    ],
  });
  it.each([
    [9080, "v1", "subset-port"],
    [undefined, "v1", "subset"],
    [9080, "v2", "port"],
    [undefined, "v2", "top"],
    [7000, undefined, "top"],
  ] as const)("port %s subset %s ▶ %s", (port, subset, want) =>
    expect(routeConsistentHash(m, port, subset)?.httpHeaderName).toBe(want));
  it("none without a consistent hash", () =>
    expect(routeConsistentHash(dr("prod"), 9080, "v1")).toBeUndefined());
});
