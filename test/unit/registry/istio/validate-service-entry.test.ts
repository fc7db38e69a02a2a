import { describe, expect, it } from "vitest";
import { serviceEntryCheck } from "../../../../lib/registry/istio/validate-service-entry.ts";
import { seObject, seSpec } from "./builders.ts";

const check = (spec: unknown, namespace?: string) => serviceEntryCheck(seObject(spec, namespace), "object");

describe("serviceEntryCheck accepts what istiod accepts", () => {
  it.each<[string, unknown]>([
    ["STATIC with endpoints", seSpec()],
    ["STATIC without endpoints (istiod no longer requires them)", seSpec({ endpoints: [] })],
    [
      "STATIC with a workloadSelector",
      seSpec({ endpoints: undefined, workloadSelector: { labels: { app: "api" } } }),
    ],
    [
      "an empty workloadSelector (selects the whole namespace)",
      seSpec({ endpoints: undefined, workloadSelector: {} }),
    ],
    ["NONE without endpoints", seSpec({ resolution: "NONE", endpoints: undefined })],
    [
      "no resolution (NONE) and no location",
      { hosts: ["*.example.com"], ports: [{ number: 443, name: "tls", protocol: "TLS" }] },
    ],
    ["DNS without endpoints on FQDN hosts", seSpec({ resolution: "DNS", endpoints: undefined })],
    [
      "DNS with hostname and IP endpoints",
      seSpec({ resolution: "DNS", endpoints: [{ address: "a.example.com" }, { address: "10.0.0.2" }] }),
    ],
    [
      "DNS_ROUND_ROBIN with one endpoint",
      seSpec({ resolution: "DNS_ROUND_ROBIN", endpoints: [{ address: "b.example.com" }] }),
    ],
    [
      "a wildcard host with DNS endpoints",
      seSpec({ hosts: ["*.example.com"], resolution: "DNS", endpoints: [{ address: "x.example.com" }] }),
    ],
    [
      "addresses: IPs and CIDRs under STATIC",
      seSpec({ addresses: ["240.0.0.1", "10.0.0.0/8", "2001:db8::/32"] }),
    ],
    [
      "several hosts with HTTP and TLS ports",
      seSpec({
        hosts: ["a.example.com", "b.example.com"],
        ports: [
          { number: 80, name: "http", protocol: "http" },
          { number: 443, name: "https", protocol: "TLS" },
        ],
      }),
    ],
    [
      "several hosts on TCP under NONE",
      seSpec({
        hosts: ["a.example.com", "b.example.com"],
        resolution: "NONE",
        endpoints: undefined,
        ports: [{ number: 5432, name: "pg", protocol: "TCP" }],
      }),
    ],
    ["an empty protocol (detected)", seSpec({ ports: [{ number: 80, name: "web" }] })],
    ["a targetPort", seSpec({ ports: [{ number: 80, name: "http", protocol: "HTTP", targetPort: 8080 }] })],
    [
      "endpoint ports naming service ports",
      seSpec({
        endpoints: [
          {
            address: "10.0.0.1",
            ports: { http: 8080 },
            labels: { v: "1" },
            weight: 3,
            locality: "r/z",
            network: "n1",
            serviceAccount: "vm",
          },
        ],
      }),
    ],
    ["a unix endpoint on one port", seSpec({ endpoints: [{ address: "unix:///var/run/a.sock" }] })],
    ["an endpoint with only a network", seSpec({ endpoints: [{ network: "remote" }] })],
    ["exportTo . and another namespace", seSpec({ exportTo: [".", "other"] })],
    ["exportTo ~ alone", seSpec({ exportTo: ["~"] })],
    ["subjectAltNames", seSpec({ subjectAltNames: ["spiffe://x/ns/a/sa/b"] })],
    ["MESH_INTERNAL", seSpec({ location: "MESH_INTERNAL" })],
  ])("%s", (_name, spec) => {
    expect(check(spec)).toBeUndefined();
  });
});

describe("serviceEntryCheck refuses what istiod refuses, naming the field", () => {
  it.each<[string, unknown, string, string]>([
    ["no spec", undefined, "object.spec", "is required"],
    ["no hosts", { ports: [] }, "object.spec.hosts", "is required"],
    ["empty hosts", seSpec({ hosts: [] }), "object.spec.hosts", "at least one host"],
    ["the full wildcard host", seSpec({ hosts: ["*"] }), "object.spec.hosts[0]", "invalid host *"],
    ["a bad host", seSpec({ hosts: ["Bad_Host.com"] }), "object.spec.hosts[0]", 'label "Bad_Host" invalid'],
    ["a bad address", seSpec({ addresses: ["10.0.0.300"] }), "object.spec.addresses[0]", "is not a valid IP"],
    [
      "a bad prefix length",
      seSpec({ addresses: ["10.0.0.0/33"] }),
      "object.spec.addresses[0]",
      "is not a valid CIDR block",
    ],
    [
      "a CIDR under DNS",
      seSpec({ resolution: "DNS", endpoints: undefined, addresses: ["10.0.0.0/8"] }),
      "object.spec.addresses[0]",
      "only for NONE/STATIC",
    ],
    ["port 0", seSpec({ ports: [{ number: 0, name: "http" }] }), "object.spec.ports[0].number", "1-65535"],
    [
      "an explicit targetPort 0 (the CRD's rule 0 < self)",
      seSpec({ ports: [{ number: 80, name: "http", protocol: "HTTP", targetPort: 0 }] }),
      "object.spec.ports[0].targetPort",
      "1-65535",
    ],
    [
      "port without a name",
      seSpec({ ports: [{ number: 80 } as never] }),
      "object.spec.ports[0].name",
      "is required",
    ],
    [
      "port name not a DNS label",
      seSpec({ ports: [{ number: 80, name: "Http_1" }] }),
      "object.spec.ports[0].name",
      "invalid port name",
    ],
    [
      "an unknown protocol",
      seSpec({ ports: [{ number: 80, name: "http", protocol: "SPDY" }] }),
      "object.spec.ports[0].protocol",
      "unsupported protocol",
    ],
    [
      "a targetPort past 65535",
      seSpec({ ports: [{ number: 80, name: "http", targetPort: 70000 }] }),
      "object.spec.ports[0].targetPort",
      "1-65535",
    ],
    [
      "a duplicate port name",
      seSpec({
        ports: [
          { number: 80, name: "http" },
          { number: 81, name: "http" },
        ],
      }),
      "object.spec.ports[1].name",
      "already defined",
    ],
    [
      "a duplicate port number",
      seSpec({
        ports: [
          { number: 80, name: "a" },
          { number: 80, name: "b" },
        ],
      }),
      "object.spec.ports[1].number",
      "already defined",
    ],
    [
      "an unknown location",
      seSpec({ location: "MESH_SOMEWHERE" as never }),
      "object.spec.location",
      "unsupported value",
    ],
    [
      "an unknown resolution",
      seSpec({ resolution: "MAGIC_DNS" as never }),
      "object.spec.resolution",
      "unsupported value",
    ],
    [
      "endpoints and workloadSelector",
      seSpec({ workloadSelector: { labels: { app: "a" } } }),
      "object.spec.endpoints",
      "only one of WorkloadSelector or Endpoints",
    ],
    ["endpoints under NONE", seSpec({ resolution: "NONE" }), "object.spec.endpoints", "resolution type none"],
    [
      "a STATIC endpoint that is a hostname",
      seSpec({ endpoints: [{ address: "a.example.com" }] }),
      "object.spec.endpoints[0].address",
      "not a valid IP address",
    ],
    [
      "a STATIC endpoint without address or network",
      seSpec({ endpoints: [{ labels: {} }] }),
      "object.spec.endpoints[0].address",
      "Address is required",
    ],
    [
      "a STATIC endpoint port not declared",
      seSpec({ endpoints: [{ address: "10.0.0.1", ports: { grpc: 9000 } }] }),
      "object.spec.endpoints[0].ports.grpc",
      "not defined by the service entry",
    ],
    [
      "a STATIC endpoint port out of range",
      seSpec({ endpoints: [{ address: "10.0.0.1", ports: { http: 0 } }] }),
      "object.spec.endpoints[0].ports.http",
      "1..65535",
    ],
    [
      "a STATIC endpoint label value",
      seSpec({ endpoints: [{ address: "10.0.0.1", labels: { v: "-x" } }] }),
      "object.spec.endpoints[0].labels.v",
      "invalid tag value",
    ],
    [
      "a negative weight",
      seSpec({ endpoints: [{ address: "10.0.0.1", weight: -1 }] }),
      "object.spec.endpoints[0].weight",
      "integer",
    ],
    [
      "a unix endpoint with a relative path",
      seSpec({ endpoints: [{ address: "unix://a.sock" }] }),
      "object.spec.endpoints[0].address",
      "absolute path",
    ],
    [
      "a unix endpoint with ports",
      seSpec({ endpoints: [{ address: "unix:///a.sock", ports: { http: 80 } }] }),
      "object.spec.endpoints[0].ports",
      "must not include ports",
    ],
    [
      "a unix endpoint with two service ports",
      seSpec({
        ports: [
          { number: 80, name: "a" },
          { number: 81, name: "b" },
        ],
        endpoints: [{ address: "unix:///a.sock" }],
      }),
      "object.spec.endpoints[0].address",
      "exactly 1 service port",
    ],
    [
      "DNS without endpoints on a wildcard host",
      seSpec({ hosts: ["*.example.com"], resolution: "DNS", endpoints: undefined }),
      "object.spec.hosts[0]",
      "hosts must be FQDN",
    ],
    [
      "DNS_ROUND_ROBIN with two endpoints",
      seSpec({
        resolution: "DNS_ROUND_ROBIN",
        endpoints: [{ address: "a.example.com" }, { address: "b.example.com" }],
      }),
      "object.spec.endpoints",
      "0 or 1 endpoint",
    ],
    [
      "a DNS endpoint that is no name",
      seSpec({ resolution: "DNS", endpoints: [{ address: "not a name" }] }),
      "object.spec.endpoints[0].address",
      "not a valid FQDN or an IP",
    ],
    [
      "a DNS endpoint with an all-digit top-level domain",
      seSpec({ resolution: "DNS", endpoints: [{ address: "a.123" }] }),
      "object.spec.endpoints[0].address",
      "not a valid FQDN",
    ],
    [
      "a DNS endpoint port not declared",
      seSpec({ resolution: "DNS", endpoints: [{ address: "a.example.com", ports: { x: 1 } }] }),
      "object.spec.endpoints[0].ports.x",
      "not defined",
    ],
    [
      "several hosts with a TCP port",
      seSpec({
        hosts: ["a.example.com", "b.example.com"],
        ports: [
          { number: 80, name: "http", protocol: "HTTP" },
          { number: 5432, name: "pg", protocol: "TCP" },
        ],
      }),
      "object.spec.ports[1].protocol",
      "non-HTTP, non-TLS",
    ],
    [
      "several hosts with a detected protocol",
      seSpec({ hosts: ["a.example.com", "b.example.com"], ports: [{ number: 80, name: "web" }] }),
      "object.spec.ports[0].protocol",
      "non-HTTP, non-TLS",
    ],
    [
      "a selector with a wildcard",
      seSpec({ endpoints: undefined, workloadSelector: { labels: { app: "*" } } }),
      "object.spec.workloadSelector.labels.app",
      "wildcard",
    ],
    [
      "exportTo . and the own namespace",
      seSpec({ exportTo: [".", "shop"] }),
      "object.spec.exportTo[1]",
      "duplicate",
    ],
    ["exportTo * with another", seSpec({ exportTo: ["*", "other"] }), "object.spec.exportTo", "public"],
    [
      "exportTo ~ with another",
      seSpec({ exportTo: ["~", "other"] }),
      "object.spec.exportTo",
      "no one (~) and someone",
    ],
    [
      "subjectAltNames not strings",
      seSpec({ subjectAltNames: [1 as never] }),
      "object.spec.subjectAltNames[0]",
      "must be a string",
    ],
  ])("%s", (_name, spec, field, message) => {
    expect(check(spec)).toEqual({ field, message: expect.stringContaining(message) });
  });
});
