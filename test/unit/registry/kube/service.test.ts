import { describe, expect, it } from "vitest";
import type { Service } from "../../../../lib/model/index.ts";
import { convertService, serviceNameOfSlice } from "../../../../lib/registry/kube/service.ts";
import type { EndpointSlice, KubeService } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { service, slice } from "./builders.ts";

const opts = { clusterId: "east", domainSuffix: "cluster.local" };

describe("convertService on API server fixtures", () => {
  it("ClusterIP service with a grpc and an http port", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-clusterip.json"), opts);
    expect(got).toEqual<Service>({
      hostname: "reviews.bookinfo.svc.cluster.local",
      name: "reviews",
      namespace: "bookinfo",
      clusterId: "east",
      resolution: "ClientSideLB",
      addresses: ["10.96.142.17"],
      ports: [
        { name: "grpc", port: 9080, protocol: "GRPC" },
        { name: "web", port: 8080, protocol: "HTTP" },
      ],
      labels: { app: "reviews", service: "reviews" },
    });
  });

  it("headless service: Passthrough, no addresses", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-headless.json"), {
      clusterId: "west",
      domainSuffix: "corp.internal",
    });
    expect(got).toEqual<Service>({
      hostname: "redis-headless.cache.svc.corp.internal",
      name: "redis-headless",
      namespace: "cache",
      clusterId: "west",
      resolution: "Passthrough",
      addresses: [],
      ports: [{ name: "tcp-redis", port: 6379, protocol: "TCP" }],
      labels: { "app.kubernetes.io/name": "redis" },
      publishNotReadyAddresses: true,
    });
  });

  it("dual-stack service: both cluster IPs, primary first; exportTo trimmed, sorted, unique", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-dual-stack.json"), opts);
    expect(got).toEqual<Service>({
      hostname: "details.bookinfo.svc.cluster.local",
      name: "details",
      namespace: "bookinfo",
      clusterId: "east",
      resolution: "ClientSideLB",
      addresses: ["10.96.88.3", "fd00:10:96::5a1"],
      ports: [{ name: "http", port: 9080, protocol: "HTTP" }],
      labels: { app: "details", service: "details" },
      exportTo: [".", "istio-system"],
    });
  });

  it("ExternalName service: Alias, mesh-external, the external name kept, no addresses", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-externalname.json"), opts);
    expect(got).toEqual<Service>({
      hostname: "payments-db.shop.svc.cluster.local",
      name: "payments-db",
      namespace: "shop",
      clusterId: "east",
      resolution: "Alias",
      addresses: [],
      ports: [{ name: "tcp-postgres", port: 5432, protocol: "TCP" }],
      labels: {},
      meshExternal: true,
      externalName: "db.payments.example.com",
    });
  });

  it("NodePort service: node ports per port, externalIPs, internalTrafficPolicy Local", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-nodeport.json"), opts);
    expect(got).toEqual<Service>({
      hostname: "istio-eastwestgateway.istio-system.svc.cluster.local",
      name: "istio-eastwestgateway",
      namespace: "istio-system",
      clusterId: "east",
      resolution: "ClientSideLB",
      addresses: ["10.96.201.44"],
      ports: [
        { name: "status-port", port: 15021, protocol: "UnsupportedProtocol", nodePort: 31021 },
        { name: "tls", port: 15443, protocol: "TLS", nodePort: 31443 },
      ],
      labels: { app: "istio-eastwestgateway", istio: "eastwestgateway" },
      externalAddresses: ["203.0.113.10"],
      nodeLocal: true,
    });
  });

  it("LoadBalancer service: ingress IP and hostname, node ports, traffic distribution annotation", () => {
    const got = convertService(loadKubeFixture<KubeService>("service-loadbalancer.json"), opts);
    expect(got).toEqual<Service>({
      hostname: "istio-ingressgateway.istio-system.svc.cluster.local",
      name: "istio-ingressgateway",
      namespace: "istio-system",
      clusterId: "east",
      resolution: "ClientSideLB",
      addresses: ["10.96.17.120"],
      ports: [
        { name: "http2", port: 80, protocol: "HTTP2", nodePort: 30080 },
        { name: "https", port: 443, protocol: "HTTPS", nodePort: 30443 },
      ],
      labels: { app: "istio-ingressgateway", istio: "ingressgateway" },
      externalAddresses: ["198.51.100.7", "a1b2c3d4e5f6-1234567890.us-east-1.elb.amazonaws.com"],
      trafficDistribution: "PreferSameZone",
    });
  });
});

describe("convertService resolution and addresses", () => {
  const cases: { name: string; in: KubeService; resolution: Service["resolution"]; addresses: string[] }[] = [
    {
      name: "dual-stack: every clusterIP, primary first",
      in: service({ clusterIP: "10.96.0.20", clusterIPs: ["10.96.0.20", "fd00:96::20"] }),
      resolution: "ClientSideLB",
      addresses: ["10.96.0.20", "fd00:96::20"],
    },
    {
      name: "no clusterIPs: clusterIP alone",
      in: service({ clusterIP: "10.96.0.21", clusterIPs: undefined }),
      resolution: "ClientSideLB",
      addresses: ["10.96.0.21"],
    },
    {
      name: "headless without clusterIPs",
      in: service({ clusterIP: "None", clusterIPs: undefined }),
      resolution: "Passthrough",
      addresses: [],
    },
    {
      name: "NodePort is load balanced on its cluster IP",
      in: service({ type: "NodePort" }),
      resolution: "ClientSideLB",
      addresses: ["10.96.142.17"],
    },
    {
      name: "LoadBalancer is load balanced on its cluster IP",
      in: service({ type: "LoadBalancer" }),
      resolution: "ClientSideLB",
      addresses: ["10.96.142.17"],
    },
    {
      name: "ExternalName without a name is not an alias (Istio requires the name)",
      in: service({ type: "ExternalName", externalName: "", clusterIP: undefined, clusterIPs: undefined }),
      resolution: "ClientSideLB",
      addresses: [],
    },
    {
      name: "headless wins over ExternalName",
      in: service({
        type: "ExternalName",
        externalName: "db.example.com",
        clusterIP: "None",
        clusterIPs: ["None"],
      }),
      resolution: "Passthrough",
      addresses: [],
    },
    {
      name: "ExternalName ▶ Alias, no addresses",
      in: service({
        type: "ExternalName",
        externalName: "db.example.com",
        clusterIP: undefined,
        clusterIPs: undefined,
      }),
      resolution: "Alias",
      addresses: [],
    },
    {
      name: "type missing is ClusterIP",
      in: service({ type: undefined }),
      resolution: "ClientSideLB",
      addresses: ["10.96.142.17"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = convertService(c.in, opts);
      expect(got.resolution).toBe(c.resolution);
      expect(got.addresses).toEqual(c.addresses);
    });
  }
});

describe("convertService ports and metadata", () => {
  it("keeps port order, names unnamed ports '' and applies Istio's protocol rules", () => {
    const got = convertService(
      service({
        ports: [
          { port: 80, protocol: "TCP", targetPort: 8080 },
          { name: "h2", port: 81, appProtocol: "kubernetes.io/h2c" },
          { name: "dns", port: 53, protocol: "UDP" },
          { name: "db", port: 3306, protocol: "TCP" },
        ],
      }),
      opts,
    );
    expect(got.ports).toEqual([
      { name: "", port: 80, protocol: "UnsupportedProtocol" },
      { name: "h2", port: 81, protocol: "HTTP2" },
      { name: "dns", port: 53, protocol: "UDP" },
      { name: "db", port: 3306, protocol: "TCP" },
    ]);
  });

  it("a service without ports or labels has none", () => {
    const got = convertService(service({ ports: undefined }, { labels: undefined }), opts);
    expect(got.ports).toEqual([]);
    expect(got.labels).toEqual({});
  });

  it("labels are copied, not shared with the input", () => {
    const input = service();
    const got = convertService(input, opts);
    got.labels.extra = "x";
    expect(input.metadata.labels).not.toHaveProperty("extra");
  });
});

describe("serviceNameOfSlice", () => {
  const cases: { name: string; in: EndpointSlice; want: string | undefined }[] = [
    { name: "fixture slice", in: loadKubeFixture<EndpointSlice>("endpointslice-ipv4.json"), want: "reviews" },
    { name: "no labels", in: slice({}, { labels: undefined }), want: undefined },
    {
      name: "labels without the service name",
      in: slice({}, { labels: { app: "reviews" } }),
      want: undefined,
    },
    {
      name: "empty service name",
      in: slice({}, { labels: { "kubernetes.io/service-name": "" } }),
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(serviceNameOfSlice(c.in)).toBe(c.want);
    });
  }
});
