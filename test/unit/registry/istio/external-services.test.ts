/** The ServiceEntry registry's records and the one set of records a host is generated from (precedence). */
import { describe, expect, it } from "vitest";
import type { Service } from "../../../../lib/model/index.ts";
import {
  externalServices,
  isExternalService,
  resolvesByDns,
  servingServices,
} from "../../../../lib/registry/istio/external-services.ts";
import { seConfig } from "./builders.ts";

const kube = (cluster: string): Service => ({
  hostname: "api.example.com",
  name: "api",
  namespace: "shop",
  clusterId: cluster,
  resolution: "ClientSideLB",
  addresses: ["10.96.0.1"],
  ports: [{ name: "http", port: 80, protocol: "HTTP" }],
  labels: {},
});
const entry = (name: string, creationTimestamp?: string, resolution: "STATIC" | "DNS" = "STATIC") =>
  externalServices({
    ...seConfig({ resolution, ...(resolution === "DNS" && { endpoints: [] }) }, { name }),
    ...(creationTimestamp && { creationTimestamp }),
  })[0] as Service;

describe("externalServices", () => {
  it("one record per host, each tagged with its ServiceEntry", () => {
    const records = externalServices({
      ...seConfig({ hosts: ["a.example.com", "b.example.com"] }),
      creationTimestamp: "2026-01-01T00:00:00Z",
    });
    expect(records.map((r) => [r.hostname, r.serviceEntry])).toEqual([
      ["a.example.com", { name: "api", creationTimestamp: "2026-01-01T00:00:00Z" }],
      ["b.example.com", { name: "api", creationTimestamp: "2026-01-01T00:00:00Z" }],
    ]);
    expect(records.every(isExternalService)).toBe(true);
    expect(isExternalService(kube("c1"))).toBe(false);
  });
});

describe("servingServices", () => {
  const cases: { name: string; records: Service[]; want: string[] }[] = [
    {
      name: "Kubernetes alone: the records as they are",
      records: [kube("c2"), kube("c1")],
      want: ["k:c2", "k:c1"],
    },
    {
      name: "Kubernetes beside an entry: every Kubernetes record, no entry",
      records: [entry("api"), kube("c2"), kube("c1")],
      want: ["k:c1", "k:c2"],
    },
    {
      name: "entries alone: the oldest",
      records: [entry("young", "2026-02-01T00:00:00Z"), entry("old", "2026-01-01T00:00:00Z")],
      want: ["e:old"],
    },
    {
      name: "entries of the same age: by name",
      records: [entry("b", "2026-01-01T00:00:00Z"), entry("a", "2026-01-01T00:00:00Z")],
      want: ["e:a"],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const got = servingServices(c.records).map((s) =>
        isExternalService(s) ? `e:${s.serviceEntry.name}` : `k:${s.clusterId}`,
      );
      expect(got).toEqual(c.want);
    });

  it("returns the very input when no entry is among the records (the Kubernetes path is untouched)", () => {
    const records = [kube("c1")];
    expect(servingServices(records)).toBe(records);
  });
});

describe("resolvesByDns", () => {
  it("only when every serving record resolves by DNS", () => {
    expect(resolvesByDns([entry("d", undefined, "DNS")])).toBe(true);
    expect(resolvesByDns([entry("s")])).toBe(false);
    expect(resolvesByDns([kube("c1")])).toBe(false);
    expect(resolvesByDns([])).toBe(false);
  });
});
