import { describe, expect, it } from "vitest";
import type { Service } from "../../../../lib/model/index.ts";
import {
  convertService,
  convertTrafficDistribution,
  parseExportTo,
} from "../../../../lib/registry/kube/service.ts";
import type { KubeService } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { service } from "./builders.ts";

const opts = { clusterId: "east", domainSuffix: "cluster.local" };
const withAnnotations = (annotations: Record<string, string>) => service({}, { annotations });

describe("exportTo annotation", () => {
  const cases: { name: string; in: string | undefined; want: string[] | undefined }[] = [
    { name: "absent ▶ public (no field)", in: undefined, want: undefined },
    { name: "empty ▶ public (no field)", in: "", want: undefined },
    { name: "all namespaces", in: "*", want: ["*"] },
    { name: "own namespace", in: ".", want: ["."] },
    { name: "none", in: "~", want: ["~"] },
    {
      name: "comma-separated, trimmed, sorted, unique",
      in: " ns-b,ns-a , ns-b,.",
      want: [".", "ns-a", "ns-b"],
    },
    { name: "only separators ▶ visible nowhere", in: " , ,", want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(parseExportTo(c.in)).toEqual(c.want);
      const annotations: Record<string, string> =
        c.in === undefined ? {} : { "networking.istio.io/exportTo": c.in };
      const got = convertService(withAnnotations(annotations), opts);
      expect(got.exportTo).toEqual(c.want);
      expect(Object.hasOwn(got, "exportTo")).toBe(c.want !== undefined);
    });
  }
});

describe("external addresses and node ports", () => {
  const lbStatus = { loadBalancer: { ingress: [{ ip: "198.51.100.9" }, { hostname: "lb.example.com" }] } };
  const cases: { name: string; in: KubeService; want: string[] | undefined }[] = [
    {
      name: "LoadBalancer ingress IPs and hostnames",
      in: service({ type: "LoadBalancer" }, {}, lbStatus),
      want: ["198.51.100.9", "lb.example.com"],
    },
    {
      name: "an ingress with both IP and hostname counts by its IP",
      in: service(
        { type: "LoadBalancer" },
        {},
        { loadBalancer: { ingress: [{ ip: "198.51.100.1", hostname: "x.example.com" }] } },
      ),
      want: ["198.51.100.1"],
    },
    {
      name: "ingress of a ClusterIP service is ignored (as Istio)",
      in: service({ type: "ClusterIP" }, {}, lbStatus),
      want: undefined,
    },
    {
      name: "LoadBalancer without ingress yet",
      in: service({ type: "LoadBalancer" }, {}, { loadBalancer: {} }),
      want: undefined,
    },
    {
      name: "externalIPs on any type, merged with ingress, sorted and unique",
      in: service({ type: "LoadBalancer", externalIPs: ["203.0.113.5", "198.51.100.9"] }, {}, lbStatus),
      want: ["198.51.100.9", "203.0.113.5", "lb.example.com"],
    },
    {
      name: "externalIPs on a ClusterIP service",
      in: service({ externalIPs: ["203.0.113.5"] }),
      want: ["203.0.113.5"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(convertService(c.in, opts).externalAddresses).toEqual(c.want);
    });
  }

  it("node ports are kept for NodePort and LoadBalancer services only", () => {
    const ports = [{ name: "http", port: 80, nodePort: 30080 }];
    const nodePortOf = (type: KubeService["spec"]["type"]) =>
      convertService(service({ type, ports }), opts).ports[0]?.nodePort;
    expect(nodePortOf("NodePort")).toBe(30080);
    expect(nodePortOf("LoadBalancer")).toBe(30080);
    expect(nodePortOf("ClusterIP")).toBeUndefined();
  });

  it("a LoadBalancer port without an allocated node port has none", () => {
    const got = convertService(service({ type: "LoadBalancer", ports: [{ name: "http", port: 80 }] }), opts);
    expect(got.ports).toEqual([{ name: "http", port: 80, protocol: "HTTP" }]);
  });
});

describe("service flags", () => {
  it("publishNotReadyAddresses only when true", () => {
    expect(convertService(service({ publishNotReadyAddresses: true }), opts).publishNotReadyAddresses).toBe(
      true,
    );
    expect(
      Object.hasOwn(
        convertService(service({ publishNotReadyAddresses: false }), opts),
        "publishNotReadyAddresses",
      ),
    ).toBe(false);
  });

  it("internalTrafficPolicy Local ▶ nodeLocal; Cluster ▶ no field", () => {
    expect(convertService(service({ internalTrafficPolicy: "Local" }), opts).nodeLocal).toBe(true);
    expect(Object.hasOwn(convertService(service(), opts), "nodeLocal")).toBe(false);
  });

  const td: { spec?: string; annotation?: string; want: Service["trafficDistribution"] }[] = [
    { want: undefined },
    { spec: "PreferClose", want: "PreferSameZone" },
    { spec: "PreferSameZone", want: "PreferSameZone" },
    { spec: "PreferSameNode", want: "PreferSameNode" },
    { annotation: "PreferClose", want: "PreferSameZone" },
    { annotation: "prefersamenode", want: "PreferSameNode" },
    { spec: "SomethingNew", annotation: "PreferSameNode", want: "PreferSameNode" },
    { spec: "PreferSameNode", annotation: "PreferClose", want: "PreferSameNode" },
    { annotation: "Anywhere", want: undefined },
  ];
  for (const c of td) {
    it(`trafficDistribution spec=${c.spec} annotation=${c.annotation} ▶ ${c.want}`, () => {
      expect(convertTrafficDistribution(c.spec, c.annotation)).toBe(c.want);
      const svc = service(
        c.spec === undefined ? {} : { trafficDistribution: c.spec },
        c.annotation === undefined
          ? {}
          : { annotations: { "networking.istio.io/traffic-distribution": c.annotation } },
      );
      expect(convertService(svc, opts).trafficDistribution).toBe(c.want);
    });
  }
});

describe("canonical output", () => {
  it("fields in a fixed order, optional ones last and only when set", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-loadbalancer.json"), opts);
    expect(Object.keys(got)).toEqual([
      "hostname",
      "name",
      "namespace",
      "clusterId",
      "resolution",
      "addresses",
      "ports",
      "labels",
      "externalAddresses",
      "trafficDistribution",
    ]);
  });

  it("label and ingress order in the input do not change the JSON", () => {
    const a = loadKubeFixture<KubeService>("service-loadbalancer.json");
    const b = loadKubeFixture<KubeService>("service-loadbalancer.json");
    b.metadata.labels = Object.fromEntries(Object.entries(b.metadata.labels ?? {}).reverse());
    b.status?.loadBalancer?.ingress?.reverse();
    expect(Object.keys(b.metadata.labels)).not.toEqual(Object.keys(a.metadata.labels ?? {}));
    expect(JSON.stringify(convertService(b, opts))).toBe(JSON.stringify(convertService(a, opts)));
  });
});
