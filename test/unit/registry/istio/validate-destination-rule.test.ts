import { describe, expect, it } from "vitest";
import { destinationRuleCheck } from "../../../../lib/registry/istio/validate-destination-rule.ts";
import { destinationRule } from "./builders.ts";

const check = (spec: Record<string, unknown>) => destinationRuleCheck(destinationRule(spec), "object");

describe("destinationRuleCheck accepts what istiod accepts", () => {
  it.each([
    ["the builder", {}],
    [
      "every implemented policy, at each level",
      {
        trafficPolicy: {
          loadBalancer: {
            consistentHash: { httpHeaderName: "x-user", ringHash: { minimumRingSize: "1024" } },
          },
          connectionPool: { http: { http2MaxRequests: 100 } },
          outlierDetection: {
            consecutive5xxErrors: 5,
            consecutiveGatewayErrors: 2,
            interval: "10s",
            baseEjectionTime: "30s",
            maxEjectionPercent: 50,
          },
          portLevelSettings: [{ port: { number: 9080 }, loadBalancer: { simple: "LEAST_REQUEST" } }],
        },
        subsets: [
          { name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } },
        ],
      },
    ],
    ["a wildcard host", { host: "*.example.com" }],
    [
      "maglev with a prime table",
      {
        trafficPolicy: {
          loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } },
        },
      },
    ],
    [
      "a workload selector exported to its namespace",
      { workloadSelector: { matchLabels: { app: "a" } }, exportTo: ["."] },
    ],
  ])("%s", (_, spec) => expect(check(spec)).toBeUndefined());
});

describe("destinationRuleCheck refuses what istiod refuses, naming the field", () => {
  it.each([
    [
      "a subset name that is not a DNS label",
      { subsets: [{ name: "v1.0" }] },
      "object.spec.subsets[0].name",
      "subset name is invalid",
    ],
    [
      "an empty subset name",
      { subsets: [{ labels: { a: "b" } }] },
      "object.spec.subsets[0].name",
      "is required",
    ],
    [
      "a duplicate subset name",
      { subsets: [{ name: "v1" }, { name: "v1" }] },
      "object.spec.subsets[1].name",
      "duplicate subset names",
    ],
    [
      "bad subset labels",
      { subsets: [{ name: "v1", labels: { version: "-x" } }] },
      "object.spec.subsets[0].labels.version",
      "invalid tag value",
    ],
    ["no host", { host: undefined }, "object.spec.host", "is required"],
    ["a bad host", { host: "a..b" }, "object.spec.host", 'label "" invalid'],
    ["an empty traffic policy", { trafficPolicy: {} }, "object.spec.trafficPolicy", "at least one field"],
    [
      "an empty subset traffic policy",
      { subsets: [{ name: "v1", trafficPolicy: {} }] },
      "object.spec.subsets[0].trafficPolicy",
      "at least one field",
    ],
    [
      "an unknown simple LB",
      { trafficPolicy: { loadBalancer: { simple: "FASTEST" } } },
      "object.spec.trafficPolicy.loadBalancer.simple",
      "unsupported value",
    ],
    [
      "a negative http2MaxRequests",
      { trafficPolicy: { connectionPool: { http: { http2MaxRequests: -1 } } } },
      "object.spec.trafficPolicy.connectionPool.http.http2MaxRequests",
      "non-negative",
    ],
    [
      "an empty connection pool",
      { trafficPolicy: { connectionPool: {} } },
      "object.spec.trafficPolicy.connectionPool",
      "at least one field",
    ],
    [
      "maxEjectionPercent over 100",
      { trafficPolicy: { outlierDetection: { maxEjectionPercent: 101 } } },
      "object.spec.trafficPolicy.outlierDetection.maxEjectionPercent",
      "not in range 0..100",
    ],
    [
      "a bad interval",
      { trafficPolicy: { outlierDetection: { interval: "10" } } },
      "object.spec.trafficPolicy.outlierDetection.interval",
      "missing unit",
    ],
    [
      "a sub-ms baseEjectionTime",
      { trafficPolicy: { outlierDetection: { baseEjectionTime: "100us" } } },
      "object.spec.trafficPolicy.outlierDetection.baseEjectionTime",
      "duration must be greater than 1ms",
    ],
    [
      "a port-level policy without port",
      { trafficPolicy: { portLevelSettings: [{ loadBalancer: { simple: "RANDOM" } }] } },
      "object.spec.trafficPolicy.portLevelSettings[0].port",
      "valid port",
    ],
    [
      "an empty port-level policy",
      { trafficPolicy: { portLevelSettings: [{ port: { number: 80 } }] } },
      "object.spec.trafficPolicy.portLevelSettings[0]",
      "at least one field",
    ],
    [
      "minimumRingSize beside ringHash",
      {
        trafficPolicy: {
          loadBalancer: { consistentHash: { httpHeaderName: "x", minimumRingSize: 10, ringHash: {} } },
        },
      },
      "object.spec.trafficPolicy.loadBalancer.consistentHash.minimumRingSize",
      "only one of",
    ],
    [
      "a cookie hash without name",
      { trafficPolicy: { loadBalancer: { consistentHash: { httpCookie: { ttl: "1s" } } } } },
      "object.spec.trafficPolicy.loadBalancer.consistentHash.httpCookie.name",
      "name required",
    ],
    [
      "a maglev table that is not prime",
      {
        trafficPolicy: {
          loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 1000 } } },
        },
      },
      "object.spec.trafficPolicy.loadBalancer.consistentHash.maglev.tableSize",
      "prime",
    ],
    ["exportTo ~", { exportTo: ["~"] }, "object.spec.exportTo[0]", "not allowed"],
    [
      "a selector rule exported elsewhere",
      { workloadSelector: { matchLabels: { app: "a" } }, exportTo: ["other"] },
      "object.spec.exportTo",
      "beyond current namespace",
    ],
  ])("%s", (_, spec, field, why) =>
    expect(check(spec)).toEqual({ field, message: expect.stringContaining(why) }));
});
