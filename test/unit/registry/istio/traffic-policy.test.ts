import { describe, expect, it } from "vitest";
import { mergeSubsetPolicy, toTrafficPolicy } from "../../../../lib/registry/istio/traffic-policy.ts";

const rr = { loadBalancer: { simple: "ROUND_ROBIN" } };
const random = { loadBalancer: { simple: "RANDOM" } };
const pool = (n: number) => ({ connectionPool: { http: { http2MaxRequests: n } } });
const outlier = { outlierDetection: { consecutive5xxErrors: 3, interval: "5s" } };
const tp = (raw: Record<string, unknown> | undefined) => (raw ? toTrafficPolicy(raw) : undefined);

describe("toTrafficPolicy", () => {
  it("normalizes every implemented part", () => {
    expect(
      toTrafficPolicy({
        loadBalancer: { consistentHash: { httpHeaderName: "x-user", ringHash: { minimumRingSize: "2048" } } },
        connectionPool: { http: { http2MaxRequests: 10 }, tcp: { maxConnections: 1 } },
        outlierDetection: {
          consecutiveErrors: 4,
          interval: "1s",
          baseEjectionTime: "30s",
          maxEjectionPercent: 20,
        },
        tls: { mode: "ISTIO_MUTUAL" },
        portLevelSettings: [{ port: { number: 80 }, loadBalancer: { simple: "LEAST_CONN" } }],
      }),
    ).toEqual({
      loadBalancer: {
        consistentHash: {
          httpHeaderName: "x-user",
          algorithm: "ringHash",
          minimumRingSize: 2048,
          ringHashSet: true,
        },
      },
      connectionPool: { http2MaxRequests: 10, maxConnections: 1 },
      outlierDetection: {
        consecutiveGatewayErrors: 4,
        intervalMs: 1000,
        baseEjectionTimeMs: 30000,
        maxEjectionPercent: 20,
      },
      tls: { mode: "ISTIO_MUTUAL" },
      portLevelSettings: [{ port: 80, loadBalancer: { simple: "LEAST_REQUEST" } }],
    });
  });
  it.each([
    [
      { consistentHash: { httpHeaderName: "h", minimumRingSize: 64 } },
      { consistentHash: { httpHeaderName: "h", algorithm: "ringHash", minimumRingSize: 64 } },
    ],
    [
      { consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } },
      { consistentHash: { algorithm: "maglev", maglevTableSize: 65537, useSourceIp: true } },
    ],
    [
      { consistentHash: { httpHeaderName: "h" } },
      { consistentHash: { httpHeaderName: "h", algorithm: "ringHash" } },
    ],
  ])("load balancer %j", (loadBalancer, want) =>
    expect(toTrafficPolicy({ loadBalancer })?.loadBalancer).toEqual(want));
});

describe("mergeSubsetPolicy (MergeSubsetTrafficPolicy)", () => {
  it.each([
    ["nothing set", undefined, undefined, 80, undefined],
    [
      "top level only",
      { ...rr, ...pool(10) },
      undefined,
      80,
      { loadBalancer: { simple: "ROUND_ROBIN" }, connectionPool: { http2MaxRequests: 10 } },
    ],
    [
      "top-level port policy replaces every part (no inheritance)",
      { ...rr, ...pool(10), portLevelSettings: [{ port: { number: 80 }, ...outlier }] },
      undefined,
      80,
      { outlierDetection: { consecutive5xxErrors: 3, intervalMs: 5000 } },
    ],
    [
      "a port policy for another port does not apply",
      { ...rr, portLevelSettings: [{ port: { number: 81 }, ...random }] },
      undefined,
      80,
      { loadBalancer: { simple: "ROUND_ROBIN" } },
    ],
    [
      "subset parts override field by field",
      { ...rr, ...pool(10) },
      { ...random },
      80,
      { loadBalancer: { simple: "RANDOM" }, connectionPool: { http2MaxRequests: 10 } },
    ],
    [
      "a subset pool replaces the whole pool",
      { ...pool(10) },
      { connectionPool: { tcp: { maxConnections: 5 } } },
      80,
      { connectionPool: { maxConnections: 5 } },
    ],
    [
      "subset over the top-level port policy",
      { ...rr, portLevelSettings: [{ port: { number: 80 }, ...pool(7) }] },
      { ...random },
      80,
      { loadBalancer: { simple: "RANDOM" }, connectionPool: { http2MaxRequests: 7 } },
    ],
    [
      "a subset port policy replaces every part",
      { ...rr, ...pool(10), ...outlier },
      { ...random, portLevelSettings: [{ port: { number: 80 }, ...pool(3) }] },
      80,
      { connectionPool: { http2MaxRequests: 3 } },
    ],
    ["subset only", undefined, { ...pool(2) }, 80, { connectionPool: { http2MaxRequests: 2 } }],
  ])("%s", (_, dest, subset, port, want) =>
    expect(mergeSubsetPolicy(tp(dest), tp(subset), port)).toEqual(want));
});
