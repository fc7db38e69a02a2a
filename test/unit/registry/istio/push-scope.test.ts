import { describe, expect, it } from "vitest";
import { serviceConfigKey } from "../../../../lib/model/index.ts";
import {
  serviceEntryChangedHosts,
  serviceEntryPushScope,
  workloadEntryPushScope,
} from "../../../../lib/registry/istio/push-scope.ts";
import { seConfig, weConfig } from "./builders.ts";

const key = (host: string, ns = "shop") => serviceConfigKey(host, ns);

describe("serviceEntryChangedHosts", () => {
  it("is the old hosts and the new, sorted, once each", () => {
    const old = seConfig({ hosts: ["b.example.com", "a.example.com"] });
    const next = seConfig({ hosts: ["c.example.com", "b.example.com"] });
    expect(serviceEntryChangedHosts(old, next)).toEqual(["a.example.com", "b.example.com", "c.example.com"]);
    expect(serviceEntryChangedHosts(undefined, next)).toEqual(["b.example.com", "c.example.com"]);
    expect(serviceEntryChangedHosts(old)).toEqual(["a.example.com", "b.example.com"]);
  });
});

describe("serviceEntryPushScope (Istio serviceEntryHandler)", () => {
  const two = { hosts: ["a.example.com", "b.example.com"] };
  it.each([
    ["add: Full for every host", undefined, seConfig(two), true, ["a.example.com", "b.example.com"], []],
    [
      "delete: Full for every host, shards dropped",
      seConfig(two),
      undefined,
      true,
      ["a.example.com", "b.example.com"],
      ["a.example.com", "b.example.com"],
    ],
    [
      "endpoints only (STATIC): EDS",
      seConfig(two),
      seConfig({ ...two, endpoints: [{ address: "10.0.0.9" }] }),
      false,
      [],
      [],
    ],
    [
      "a host removed: Full for it only",
      seConfig(two),
      seConfig({ hosts: ["a.example.com"] }),
      true,
      ["b.example.com"],
      ["b.example.com"],
    ],
    [
      "a port changed: Full for both",
      seConfig(two),
      seConfig({ ...two, ports: [{ number: 81, name: "http", protocol: "HTTP" }] }),
      true,
      ["a.example.com", "b.example.com"],
      [],
    ],
    [
      "a targetPort changed: Full (the model does not hold it)",
      seConfig(two),
      seConfig({ ...two, ports: [{ number: 80, name: "http", protocol: "HTTP", targetPort: 8080 }] }),
      true,
      ["a.example.com", "b.example.com"],
      [],
    ],
    [
      "labels changed: Full",
      seConfig(two),
      seConfig(two, { labels: { a: "b" } }),
      true,
      ["a.example.com", "b.example.com"],
      [],
    ],
    [
      "unchanged DNS: Full (its endpoints live in the cluster)",
      seConfig({ resolution: "DNS" }),
      seConfig({ resolution: "DNS", endpoints: [{ address: "x.example.com" }] }),
      true,
      ["api.example.com"],
      [],
    ],
  ] as const)("%s", (_name, old, next, full, updated, removed) => {
    const scope = serviceEntryPushScope(old, next);
    expect(scope.full).toBe(full);
    expect(scope.configsUpdated).toEqual(updated.map((h) => key(h)));
    expect(scope.removedHosts).toEqual(removed);
    expect(scope.endpointHosts).toEqual(next ? [...new Set(next.spec.hosts)].sort() : []);
  });
});

describe("workloadEntryPushScope (Istio workloadEntryHandler)", () => {
  const selecting = (name: string, labels: Record<string, string>, extra = {}) =>
    seConfig(
      { hosts: [`${name}.example.com`], endpoints: undefined, workloadSelector: { labels }, ...extra },
      { name },
    );
  const api = selecting("api", { app: "api" });
  const web = selecting("web", { app: "web" });
  const dns = selecting("dns", { app: "api" }, { resolution: "DNS" });
  const all = selecting("all", {});
  const inline = seConfig({ hosts: ["inline.example.com"] }, { name: "inline" });
  const elsewhere = seConfig(
    { hosts: ["far.example.com"], endpoints: undefined, workloadSelector: {} },
    { name: "far", namespace: "far" },
  );
  const entries = [web, api, inline, elsewhere, all];

  it("an added WorkloadEntry is EDS for the entries that select it in its namespace", () => {
    const scope = workloadEntryPushScope(undefined, weConfig(), entries);
    expect(scope.serviceEntries.map((s) => s.name)).toEqual(["all", "api"]);
    expect(scope.endpointHosts).toEqual([
      { namespace: "shop", hostname: "all.example.com" },
      { namespace: "shop", hostname: "api.example.com" },
    ]);
    expect(scope.full).toBe(false);
    expect(scope.configsUpdated).toEqual([]);
  });

  it("a relabelled WorkloadEntry touches the entries it left and those it joined", () => {
    const scope = workloadEntryPushScope(weConfig(), weConfig({ labels: { app: "web" } }), entries);
    expect(scope.serviceEntries.map((s) => s.name)).toEqual(["all", "api", "web"]);
  });

  it("a DNS ServiceEntry among them makes it a Full push naming its hosts", () => {
    const scope = workloadEntryPushScope(weConfig(), undefined, [...entries, dns]);
    expect(scope.full).toBe(true);
    expect(scope.configsUpdated).toEqual([key("dns.example.com")]);
  });

  it("a hostname address only counts for DNS ServiceEntries", () => {
    const scope = workloadEntryPushScope(undefined, weConfig({ address: "vm.example.com" }), [
      ...entries,
      dns,
    ]);
    expect(scope.serviceEntries.map((s) => s.name)).toEqual(["dns"]);
  });
});
