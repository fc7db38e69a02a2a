import { describe, expect, it } from "vitest";
import { fqdn, workloadEntryCheck } from "../../../../lib/registry/istio/validate-workload-entry.ts";
import { weObject } from "./builders.ts";

const check = (spec: unknown) => workloadEntryCheck(weObject(spec), "object");

describe("workloadEntryCheck accepts what istiod accepts", () => {
  it.each<[string, unknown]>([
    ["an IPv4 address", { address: "10.0.0.1" }],
    ["an IPv6 address", { address: "2001:db8::1" }],
    ["a hostname (for DNS ServiceEntries)", { address: "vm-1.example.com" }],
    ["a network without address (behind its gateway)", { network: "remote" }],
    ["a unix socket", { address: "unix:///var/run/app.sock" }],
    ["an abstract unix socket", { address: "unix://@app" }],
    [
      "every field",
      {
        address: "10.0.0.1",
        ports: { http: 8080, "grpc-api": 9000 },
        labels: { app: "api", "example.com/tier": "" },
        network: "n1",
        locality: "us-east/us-east-1a/rack1",
        weight: 4294967295,
        serviceAccount: "vm-sa",
      },
    ],
  ])("%s", (_name, spec) => {
    expect(check(spec)).toBeUndefined();
  });
});

describe("workloadEntryCheck refuses what istiod refuses, naming the field", () => {
  it.each<[string, unknown, string, string]>([
    ["no spec", undefined, "object.spec", "is required"],
    ["no address and no network", { labels: { a: "b" } }, "object.spec.address", "address is required"],
    [
      "an address that is neither IP nor FQDN",
      { address: "not a name" },
      "object.spec.address",
      "not a valid FQDN or an IP",
    ],
    [
      "an address past 256 characters",
      { address: `${"a".repeat(250)}.example` },
      "object.spec.address",
      "at most 256",
    ],
    ["a relative unix path", { address: "unix://app.sock" }, "object.spec.address", "absolute path"],
    ["a unix directory", { address: "unix:///var/run/" }, "object.spec.address", "absolute path"],
    [
      "a unix socket with ports",
      { address: "unix:///a.sock", ports: { http: 80 } },
      "object.spec.ports",
      "must not include ports",
    ],
    [
      "a port name that is not a DNS label",
      { address: "10.0.0.1", ports: { "http.1": 80 } },
      'object.spec.ports["http.1"]',
      "invalid port name",
    ],
    ["a port 0", { address: "10.0.0.1", ports: { http: 0 } }, "object.spec.ports.http", "1..65535"],
    [
      "a port that is not a number",
      { address: "10.0.0.1", ports: { http: "80" } },
      "object.spec.ports.http",
      "1..65535",
    ],
    [
      "a bad label key",
      { address: "10.0.0.1", labels: { "a/b/c": "x" } },
      'object.spec.labels["a/b/c"]',
      'invalid tag key: "a/b/c"',
    ],
    ["a weight past uint32", { address: "10.0.0.1", weight: 4294967296 }, "object.spec.weight", "integer"],
    [
      "a service account past 253",
      { address: "10.0.0.1", serviceAccount: "s".repeat(254) },
      "object.spec.serviceAccount",
      "at most 253",
    ],
    [
      "a locality that is not a string",
      { address: "10.0.0.1", locality: 3 },
      "object.spec.locality",
      "must be a string",
    ],
  ])("%s", (_name, spec, field, message) => {
    expect(check(spec)).toEqual({ field, message: expect.stringContaining(message) });
  });
});

describe("fqdn (istiod ValidateFQDN)", () => {
  it.each([["example.com"], ["istio.io."], ["single"], ["a-b.c-d.e"], ["Example.COM"]])("accepts %s", (v) =>
    expect(fqdn(v, "x")).toBeUndefined());
  it.each([
    ["", "empty"],
    ["a..b", 'label "" invalid'],
    ["*.example.com", 'label "*" invalid'],
    ["example.123", "cannot be all-numeric"],
    ["123", "cannot be all-numeric"],
    [`${"a.".repeat(128)}com`, "too long"],
  ])("refuses %j", (v, why) => expect(fqdn(v, "x")?.message).toContain(why));
});
