import { describe, expect, it } from "vitest";
import type { Service } from "../../../../lib/model/index.ts";
import { hostPrecedence, type ServiceEntryCandidate } from "../../../../lib/registry/istio/precedence.ts";

const HOST = "reviews.default.svc.cluster.local";

function svc(overrides: Partial<Service> = {}): Service {
  return {
    hostname: HOST,
    name: "reviews",
    namespace: "default",
    clusterId: "c1",
    resolution: "ClientSideLB",
    addresses: [],
    ports: [{ name: "http", port: 80, protocol: "HTTP" }],
    labels: {},
    ...overrides,
  };
}

function entry(
  configName: string,
  creationTimestamp?: string,
  overrides: Partial<Service> = {},
): ServiceEntryCandidate {
  return {
    service: svc({ name: HOST, resolution: "DNSLB", meshExternal: true, ...overrides }),
    configName,
    ...(creationTimestamp !== undefined && { creationTimestamp }),
  };
}

describe("hostPrecedence", () => {
  it("Kubernetes wins in its namespace, every cluster's record kept, entries shadowed", () => {
    const k2 = svc({ clusterId: "c2" });
    const k1 = svc();
    const se = entry("reviews-se", "2020-01-01T00:00:00Z");
    expect(hostPrecedence([k2, k1], [se])).toEqual([
      { namespace: "default", provider: "Kubernetes", services: [k1, k2], shadowed: [se] },
    ]);
  });

  it("a ServiceEntry in another namespace does not compete", () => {
    const other = entry("x", undefined, { namespace: "other" });
    expect(hostPrecedence([svc()], [other]).map((p) => [p.namespace, p.provider])).toEqual([
      ["default", "Kubernetes"],
      ["other", "External"],
    ]);
  });

  it.each<[string, ServiceEntryCandidate[], string]>([
    ["the oldest entry wins", [entry("b", "2021-01-01T00:00:00Z"), entry("a", "2022-01-01T00:00:00Z")], "b"],
    ["an unknown creation time counts as oldest", [entry("b", "2021-01-01T00:00:00Z"), entry("z")], "z"],
    [
      "equal times fall back to the config name",
      [entry("b", "2021-01-01T00:00:00Z"), entry("a", "2021-01-01T00:00:00Z")],
      "a",
    ],
    [
      "fractional seconds still order",
      [entry("a", "2021-01-01T00:00:00.5Z"), entry("b", "2021-01-01T00:00:00.25Z")],
      "b",
    ],
  ])("without Kubernetes: %s", (_name, entries, winner) => {
    const forward = hostPrecedence([], entries);
    const backward = hostPrecedence([], [...entries].reverse());
    expect(forward).toEqual(backward);
    expect(forward[0]?.provider).toBe("External");
    const won = entries.find((e) => e.configName === winner);
    expect(forward[0]?.services).toEqual([won?.service]);
    expect(forward[0]?.shadowed).toHaveLength(entries.length - 1);
  });

  it("refuses services of different hostnames", () => {
    expect(() => hostPrecedence([svc()], [entry("a", undefined, { hostname: "x.example.com" })])).toThrow(
      /one hostname/,
    );
  });
});
