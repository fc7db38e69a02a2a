import { describe, expect, it } from "vitest";
import type { Endpoint, Service } from "../../../../lib/model/index.ts";
import {
  convertServiceEntry,
  selectsWorkloadEntry,
  serviceEntryEndpoints,
  serviceEntryUnsupportedFields,
} from "../../../../lib/registry/istio/service-entry.ts";
import { seConfig, seSpec, weConfig } from "./builders.ts";

const options = { trustDomain: "cluster.local" };

/** The endpoint fields every converted endpoint shares, with overrides. */
function endpoint(overrides: Partial<Endpoint> = {}): Endpoint {
  return {
    address: "10.0.0.1",
    port: 80,
    servicePortName: "http",
    labels: { "topology.istio.io/cluster": "c1" },
    locality: { region: "", zone: "", subzone: "" },
    serviceAccount: "",
    health: "HEALTHY",
    ...overrides,
  };
}

describe("convertServiceEntry", () => {
  it("makes one Service per host under the config's namespace and cluster", () => {
    const services = convertServiceEntry(
      seConfig(
        {
          hosts: ["a.example.com", "b.example.com", "a.example.com"],
          addresses: ["240.0.0.1/32", "10.0.0.0/8", "2001:db8::1/128", "240.0.0.1"],
          ports: [
            { number: 80, name: "http", protocol: "http" },
            { number: 9000, name: "grpc-api", protocol: "GRPC" },
            { number: 5432, name: "tcp-db" },
          ],
          exportTo: ["~"],
          subjectAltNames: ["spiffe://b", "spiffe://a", "spiffe://a"],
        },
        { labels: { z: "1", a: "2" } },
      ),
    );
    const expected: Service = {
      hostname: "a.example.com",
      name: "a.example.com",
      namespace: "shop",
      clusterId: "c1",
      resolution: "ClientSideLB",
      addresses: ["240.0.0.1", "10.0.0.0/8", "2001:db8::1"],
      // The protocol comes from `protocol` alone (as Istio's ServiceEntry conversion): an unset one is detected.
      ports: [
        { name: "http", port: 80, protocol: "HTTP" },
        { name: "grpc-api", port: 9000, protocol: "GRPC" },
        { name: "tcp-db", port: 5432, protocol: "UnsupportedProtocol" },
      ],
      labels: { a: "2", z: "1" },
      meshExternal: true,
      exportTo: ["~"],
      subjectAltNames: ["spiffe://a", "spiffe://b"],
    };
    expect(services).toEqual([expected, { ...expected, hostname: "b.example.com", name: "b.example.com" }]);
    expect(JSON.stringify(services[0])).toBe(JSON.stringify(expected));
  });

  it.each([
    ["STATIC", "ClientSideLB"],
    ["NONE", "Passthrough"],
    [undefined, "Passthrough"],
    ["DNS", "DNSLB"],
    ["DNS_ROUND_ROBIN", "DNSRoundRobinLB"],
  ] as const)("maps resolution %s to %s", (resolution, want) => {
    expect(convertServiceEntry(seConfig({ resolution }))[0]?.resolution).toBe(want);
  });

  it("is mesh-internal only for MESH_INTERNAL, and leaves optional fields out when unset", () => {
    const [internal] = convertServiceEntry(seConfig({ location: "MESH_INTERNAL" }));
    expect(internal).not.toHaveProperty("meshExternal");
    expect(internal).not.toHaveProperty("exportTo");
    expect(internal).not.toHaveProperty("subjectAltNames");
    expect(internal?.addresses).toEqual([]);
    expect(convertServiceEntry(seConfig())[0]?.meshExternal).toBe(true);
  });
});

describe("serviceEntryEndpoints", () => {
  it("turns STATIC endpoints into endpoints per host and port, ports map > targetPort > number", () => {
    const se = seConfig({
      hosts: ["a.example.com", "b.example.com"],
      ports: [
        { number: 80, name: "http", protocol: "HTTP", targetPort: 8080 },
        { number: 9000, name: "grpc", protocol: "GRPC" },
      ],
      endpoints: [
        { address: "10.0.0.2", ports: { grpc: 19000 }, labels: { v: "2" }, weight: 5, network: "n1" },
        { address: "10.0.0.1", locality: "us/us-1a/r1", serviceAccount: "vm" },
      ],
    });
    const second = endpoint({
      address: "10.0.0.2",
      labels: { "topology.istio.io/cluster": "c1", "topology.istio.io/network": "n1", v: "2" },
      weight: 5,
      network: "n1",
    });
    const first = endpoint({
      labels: {
        "topology.istio.io/cluster": "c1",
        "topology.istio.io/subzone": "r1",
        "topology.kubernetes.io/region": "us",
        "topology.kubernetes.io/zone": "us-1a",
      },
      locality: { region: "us", zone: "us-1a", subzone: "r1" },
      serviceAccount: "spiffe://cluster.local/ns/shop/sa/vm",
    });
    const want = [
      { ...first, port: 8080, servicePortName: "http" },
      { ...first, port: 9000, servicePortName: "grpc" },
      { ...second, port: 8080, servicePortName: "http" },
      { ...second, port: 19000, servicePortName: "grpc" },
    ];
    expect(serviceEntryEndpoints(se, [], options)).toEqual([
      { hostname: "a.example.com", endpoints: want },
      { hostname: "b.example.com", endpoints: want },
    ]);
  });

  it("reads the locality from the istio-locality label when the endpoint has none", () => {
    const se = seConfig({ endpoints: [{ address: "10.0.0.1", labels: { "istio-locality": "eu.eu-1b" } }] });
    expect(serviceEntryEndpoints(se, [], options)[0]?.endpoints[0]?.locality).toEqual({
      region: "eu",
      zone: "eu-1b",
      subzone: "",
    });
  });

  it("skips unix and network-only endpoints (reported as unsupported)", () => {
    const se = seConfig({
      endpoints: [{ address: "unix:///a.sock" }, { network: "remote" }, { address: "10.0.0.1" }],
    });
    expect(serviceEntryEndpoints(se, [], options)[0]?.endpoints.map((e) => e.address)).toEqual(["10.0.0.1"]);
  });

  it("keeps DNS endpoint hostnames; without endpoints a DNS host resolves itself on targetPort or number", () => {
    const withEndpoints = seConfig({ resolution: "DNS", endpoints: [{ address: "backend.example.com" }] });
    expect(serviceEntryEndpoints(withEndpoints, [], options)[0]?.endpoints).toEqual([
      endpoint({ address: "backend.example.com" }),
    ]);
    const bare = seConfig({
      resolution: "DNS_ROUND_ROBIN",
      endpoints: undefined,
      ports: [
        { number: 443, name: "https", protocol: "HTTPS", targetPort: 8443 },
        { number: 80, name: "http", protocol: "HTTP" },
      ],
    });
    const hostOnly = { labels: {}, address: "api.example.com" };
    expect(serviceEntryEndpoints(bare, [], options)).toEqual([
      {
        hostname: "api.example.com",
        endpoints: [
          endpoint({ ...hostOnly, port: 80 }),
          endpoint({ ...hostOnly, port: 8443, servicePortName: "https" }),
        ],
      },
    ]);
  });

  it("has no endpoints for NONE or for STATIC without endpoints", () => {
    expect(
      serviceEntryEndpoints(seConfig({ resolution: "NONE", endpoints: undefined }), [], options)[0]
        ?.endpoints,
    ).toEqual([]);
    expect(serviceEntryEndpoints(seConfig({ endpoints: [] }), [], options)[0]?.endpoints).toEqual([]);
  });

  it("turns the WorkloadEntries its selector matches in its namespace into endpoints", () => {
    const se = seConfig({
      endpoints: undefined,
      workloadSelector: { labels: { app: "api" } },
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    });
    const candidates = [
      weConfig({
        address: "10.1.0.1",
        ports: { http: 8080 },
        serviceAccount: "vm",
        weight: 2,
        network: "n2",
        locality: "r/z",
      }),
      weConfig({ address: "10.1.0.2", labels: { app: "web" } }, { name: "other-app" }),
      weConfig({ address: "10.1.0.3" }, { name: "other-ns", namespace: "elsewhere" }),
      // Metadata labels override spec labels when selecting.
      weConfig({ address: "10.1.0.4", labels: { app: "web" } }, { name: "meta", labels: { app: "api" } }),
      // A hostname address only serves DNS ServiceEntries.
      weConfig({ address: "vm.example.com" }, { name: "dns-only" }),
    ];
    const got = serviceEntryEndpoints(se, candidates, options)[0]?.endpoints ?? [];
    expect(got.map((e) => `${e.address}:${e.port}`)).toEqual(["10.1.0.1:8080", "10.1.0.4:80"]);
    expect(got[0]).toEqual({
      address: "10.1.0.1",
      port: 8080,
      servicePortName: "http",
      labels: {
        app: "api",
        "topology.istio.io/cluster": "c1",
        "topology.istio.io/network": "n2",
        "topology.kubernetes.io/region": "r",
        "topology.kubernetes.io/zone": "z",
      },
      locality: { region: "r", zone: "z", subzone: "" },
      serviceAccount: "spiffe://cluster.local/ns/shop/sa/vm",
      health: "HEALTHY",
      weight: 2,
      network: "n2",
    });
    const dns = seConfig({
      resolution: "DNS",
      endpoints: undefined,
      workloadSelector: { labels: { app: "api" } },
    });
    expect(serviceEntryEndpoints(dns, candidates, options)[0]?.endpoints.map((e) => e.address)).toEqual([
      "10.1.0.1",
      "10.1.0.4",
      "vm.example.com",
    ]);
  });

  it("selects by namespace and labels; an empty selector selects the whole namespace; no selector selects none", () => {
    const we = weConfig();
    expect(selectsWorkloadEntry(seConfig({ workloadSelector: { labels: { app: "api" } } }), we)).toBe(true);
    expect(selectsWorkloadEntry(seConfig({ workloadSelector: {} }), we)).toBe(true);
    expect(selectsWorkloadEntry(seConfig({ workloadSelector: { labels: { app: "x" } } }), we)).toBe(false);
    expect(selectsWorkloadEntry(seConfig({ workloadSelector: {} }, { namespace: "other" }), we)).toBe(false);
    expect(selectsWorkloadEntry(seConfig(), we)).toBe(false);
  });
});

describe("serviceEntryUnsupportedFields", () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ["nothing for a plain spec", { ...seSpec() }, []],
    [
      "unix and network-only endpoints, and unknown fields",
      {
        ...seSpec({ endpoints: [{ address: "unix:///a.sock" }, { network: "n" }, { address: "10.0.0.1" }] }),
        endpoints: [{ address: "unix:///a.sock" }, { network: "n" }, { address: "10.0.0.1", future: 1 }],
        newField: true,
      },
      ["spec.endpoints[0].address", "spec.endpoints[1].address", "spec.endpoints[2].future", "spec.newField"],
    ],
    [
      "targetPort under NONE (Istio's passthrough target ports)",
      {
        ...seSpec({
          resolution: "NONE",
          endpoints: undefined,
          ports: [{ number: 80, name: "http", targetPort: 8080 }],
        }),
      },
      ["spec.ports[0].targetPort"],
    ],
    [
      "DYNAMIC_DNS (Envoy's dynamic forward proxy; served as passthrough)",
      {
        hosts: ["*.example.com"],
        ports: [{ number: 80, name: "http", protocol: "HTTP" }],
        resolution: "DYNAMIC_DNS",
      },
      ["spec.resolution"],
    ],
  ])("%s", (_name, spec, want) => {
    expect(serviceEntryUnsupportedFields(spec)).toEqual(want);
  });
});

describe("serviceEntryEndpoints output", () => {
  it("gives each host its own endpoint objects", () => {
    const [a, b] = serviceEntryEndpoints(
      seConfig({ hosts: ["a.example.com", "b.example.com"] }),
      [],
      options,
    );
    expect(a?.endpoints).toEqual(b?.endpoints);
    expect(a?.endpoints[0]).not.toBe(b?.endpoints[0]);
    expect(a?.endpoints[0]?.labels).not.toBe(b?.endpoints[0]?.labels);
  });
});
