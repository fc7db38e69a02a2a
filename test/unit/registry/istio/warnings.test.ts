/**
 * istioWarnings beyond the parity table: other kinds and objects without a spec give none, every
 * message names its field, and each policy level of a DestinationRule is looked at.
 */
import { describe, expect, it } from "vitest";
import { istioWarnings } from "../../../../lib/registry/istio/warnings.ts";
import { destinationRule, seObject, seSpec } from "./builders.ts";

describe("istioWarnings", () => {
  it("gives nothing for other kinds or an object without a spec", () => {
    expect(istioWarnings("Service", { spec: { ports: [] } })).toEqual([]);
    expect(istioWarnings("Gateway", { spec: { servers: [] } })).toEqual([]);
    expect(istioWarnings("VirtualService", { metadata: { name: "x" } })).toEqual([]);
  });

  it("names the field of every DestinationRule policy level it warns about", () => {
    const dr = destinationRule({
      trafficPolicy: {
        portLevelSettings: [{ port: { number: 80 }, outlierDetection: { consecutiveErrors: 5 } }],
      },
      subsets: [{ name: "v1", trafficPolicy: { loadBalancer: { consistentHash: { minimumRingSize: 64 } } } }],
    });
    expect(istioWarnings("DestinationRule", dr as unknown as Record<string, unknown>)).toEqual([
      "spec.trafficPolicy.portLevelSettings[0].outlierDetection.consecutiveErrors: outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or consecutive5xxErrors instead",
      "spec.subsets[0].trafficPolicy.loadBalancer.consistentHash.minimumRingSize: consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead",
    ]);
  });

  it("gives a partial wildcard host no warning under DYNAMIC_DNS, where wildcards are the point", () => {
    const base = { hosts: ["*example.com"], ports: [{ number: 80, name: "http", protocol: "HTTP" }] };
    const se = (resolution: string) => seObject({ ...base, resolution });
    expect(istioWarnings("ServiceEntry", se("DYNAMIC_DNS"))).toEqual([]);
    expect(istioWarnings("ServiceEntry", se("NONE"))).toEqual([
      'spec.hosts[0]: partial wildcard "*example.com" not allowed',
    ]);
    expect(istioWarnings("ServiceEntry", seObject(seSpec()))).toEqual([]);
  });
});
