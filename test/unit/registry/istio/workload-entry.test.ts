import { describe, expect, it } from "vitest";
import {
  endpointPort,
  workloadEntryLabels,
  workloadEntryUnsupportedFields,
  workloadLocality,
} from "../../../../lib/registry/istio/workload-entry.ts";
import { weConfig } from "./builders.ts";

describe("workloadEntryLabels", () => {
  it("puts metadata labels over spec labels, sorted", () => {
    const we = weConfig({ labels: { app: "web", v: "1" } }, { labels: { app: "api", a: "x" } });
    expect(Object.entries(workloadEntryLabels(we))).toEqual([
      ["a", "x"],
      ["app", "api"],
      ["v", "1"],
    ]);
  });
});

describe("endpointPort", () => {
  const port = { name: "http", number: 80 };
  it.each([
    ["the ports map entry", { ports: { http: 8080 } }, port, 8080],
    ["targetPort when the map has no entry", { ports: { grpc: 1 } }, { ...port, targetPort: 9090 }, 9090],
    ["the number otherwise", {}, port, 80],
    ["the number when targetPort is 0", {}, { ...port, targetPort: 0 }, 80],
    ["not a prototype key", { ports: {} }, { name: "constructor", number: 81 }, 81],
  ])("%s", (_name, we, p, want) => {
    expect(endpointPort(we, p)).toBe(want);
  });
});

describe("workloadLocality", () => {
  it.each([
    ["the spec's locality", { locality: "r/z/s/extra" }, {}, { region: "r", zone: "z", subzone: "s" }],
    [
      "the istio-locality label, dots for slashes",
      {},
      { "istio-locality": "r.z" },
      { region: "r", zone: "z", subzone: "" },
    ],
    ["none", {}, {}, { region: "", zone: "", subzone: "" }],
  ])("%s", (_name, we, labels, want) => {
    expect(workloadLocality(we, labels)).toEqual(want);
  });
});

describe("workloadEntryUnsupportedFields", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ["nothing for an IP or hostname", { address: "10.0.0.1", weight: 1 }, []],
    ["a unix socket", { address: "unix:///a.sock" }, ["spec.address"]],
    ["a network-only workload", { network: "n1" }, ["spec.address"]],
    ["unknown fields, escaped", { address: "vm.example.com", "x/y": 1 }, ['spec["x/y"]']],
  ])("%s", (_name, spec, want) => {
    expect(workloadEntryUnsupportedFields(spec)).toEqual(want);
  });
});
