/**
 * Cluster kinds by service resolution and the inbound side, as istiod builds them
 * (pilot/pkg/networking/core/cluster.go convertResolution, buildOutboundClusters: UDP ports and
 * Alias services skipped; cluster_builder.go buildSubsetCluster: DNS subsets carry only their
 * labelled endpoints; buildInboundCluster: the DestinationRule's connection pool on the receiver).
 */
import { describe, expect, it } from "vitest";
import type { Resolution } from "../../../../lib/model/index.ts";
import { sidecarClusters } from "../../../../lib/resources/generators/sidecar/cluster.ts";
import { outboundClusters } from "../../../../lib/resources/generators/sidecar/cluster-outbound.ts";
import { defaultSidecarMesh } from "../../../../lib/resources/generators/sidecar/types.ts";
import { bookinfoInputs, ep, host, productpage, reviewsRule, svc, sview } from "./bookinfo.ts";
import { assertClustersValid, byName, istioMeta, typeName, upstream } from "./cluster-view.ts";

const ctx = { mesh: { ...defaultSidecarMesh }, proxyIps: ["10.0.0.5"] };
const tcp = { name: "tcp", port: 5432, protocol: "TCP" as const };

describe("cluster type by resolution (convertResolution)", () => {
  it.each([
    ["ClientSideLB", "EDS"],
    ["DNSLB", "STRICT_DNS"],
    ["DNSRoundRobinLB", "LOGICAL_DNS"],
    ["Passthrough", "ORIGINAL_DST"],
  ] as [Resolution, string][])("%s ▶ %s", (resolution, want) => {
    const v = sview(svc("db", [tcp], { resolution }), [ep("db.example.com", 5432, "tcp")]);
    const out = outboundClusters(v, ctx);
    assertClustersValid(out);
    expect(out.map((c) => typeName(c.message))).toEqual([want]);
  });

  it("a LOGICAL_DNS cluster carries one endpoint, however many the host has (Envoy NACKs more)", () => {
    // Envoy: "LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single
    // lb_endpoint"; istiod keeps one (validation of DNS_ROUND_ROBIN, istio/istio#41811, #41831).
    const v = sview(svc("api", [tcp], { resolution: "DNSRoundRobinLB" }), [
      ep("a.example.com", 5432, "tcp", { locality: { region: "r1", zone: "", subzone: "" } }),
      ep("b.example.com", 5432, "tcp", { locality: { region: "r2", zone: "", subzone: "" } }),
    ]);
    const out = outboundClusters(v, ctx);
    assertClustersValid(out);
    const la = byName(out, `outbound|5432||${host("api")}`).loadAssignment;
    expect(la?.endpoints.length).toBe(1);
    expect(la?.endpoints[0]?.lbEndpoints.length).toBe(1);
    // STRICT_DNS keeps them all.
    const strict = outboundClusters(
      sview(svc("api", [tcp], { resolution: "DNSLB" }), [
        ep("a.example.com", 5432, "tcp"),
        ep("b.example.com", 5432, "tcp"),
      ]),
      ctx,
    );
    expect(
      byName(strict, `outbound|5432||${host("api")}`).loadAssignment?.endpoints[0]?.lbEndpoints.length,
    ).toBe(2);
  });

  it("Alias services and UDP ports get no cluster", () => {
    const alias = sview(svc("old", [tcp], { resolution: "Alias" }), []);
    const udp = sview(svc("dns", [{ name: "udp", port: 53, protocol: "UDP" }, tcp]), []);
    expect(outboundClusters(alias, ctx)).toEqual([]);
    expect(outboundClusters(udp, ctx).map((c) => c.name)).toEqual([`outbound|5432||${host("dns")}`]);
  });

  it("a DNS subset carries only the endpoints with its labels; one with none is not built", () => {
    const v = sview(
      svc("db", [tcp], { resolution: "DNSLB" }),
      [
        ep("a.example.com", 5432, "tcp", { labels: { version: "v1" } }),
        ep("b.example.com", 5432, "tcp", { labels: { version: "v2" } }),
      ],
      { destinationRule: reviewsRule({ host: "db" }) },
    );
    const out = outboundClusters(v, ctx);
    assertClustersValid(out);
    expect(out.map((c) => c.name)).toEqual([
      `outbound|5432||${host("db")}`,
      `outbound|5432|v1|${host("db")}`,
      `outbound|5432|v2|${host("db")}`,
    ]);
    const v1 = byName(out, `outbound|5432|v1|${host("db")}`);
    const addrs = v1.loadAssignment?.endpoints
      .flatMap((l) => l.lbEndpoints)
      .map((e) => e.hostIdentifier.case === "endpoint" && e.hostIdentifier.value.address?.address.value);
    expect(addrs?.map((a) => a && "address" in a && a.address)).toEqual(["a.example.com"]);
  });
});

describe("inbound clusters (buildInboundClusters)", () => {
  const grpc = { name: "grpc", port: 7070, protocol: "GRPC" as const };
  const inputs = bookinfoInputs();
  const pp2 = svc("productpage-canary", [{ name: "http", port: 9080, protocol: "HTTP" }]);

  it("one per target port, ascending; services sharing the port are listed once per host; gRPC is HTTP/2", () => {
    const instances = [
      {
        service: svc("grpc-api", [grpc]),
        servicePort: grpc,
        targetPort: 17070,
        endpoint: ep("10.0.0.5", 17070, "grpc"),
      },
      ...inputs.instances,
      {
        service: pp2,
        servicePort: pp2.ports[0] ?? grpc,
        targetPort: 9080,
        endpoint: ep("10.0.0.5", 9080, "http"),
      },
    ];
    const out = sidecarClusters({ ...inputs, instances });
    assertClustersValid(out);
    expect(out.filter((c) => c.name.startsWith("inbound|")).map((c) => c.name)).toEqual([
      "inbound|9080||",
      "inbound|17070||",
    ]);
    expect(istioMeta(byName(out, "inbound|9080||"))?.services).toEqual([
      { host: host("productpage"), name: "productpage", namespace: "default" },
      { host: host("productpage-canary"), name: "productpage-canary", namespace: "default" },
    ]);
    expect(upstream(byName(out, "inbound|17070||"))).toBe("h2");
  });

  it("the service's DestinationRule pool (port-level first) sets the receiver's breakers and config metadata", () => {
    const rule = reviewsRule({
      host: "productpage",
      trafficPolicy: {
        connectionPool: { tcp: { maxConnections: 10 } },
        portLevelSettings: [{ port: { number: 9080 }, connectionPool: { tcp: { maxConnections: 20 } } }],
      },
    });
    const services = inputs.services.map((v) =>
      v.hostname === productpage.hostname ? { ...v, destinationRule: rule } : v,
    );
    const out = sidecarClusters({ ...inputs, services });
    const c = byName(out, "inbound|9080||");
    expect(c.circuitBreakers?.thresholds[0]?.maxConnections).toBe(20);
    expect(istioMeta(c)?.config).toBe(
      "/apis/networking.istio.io/v1alpha3/namespaces/default/destination-rule/reviews",
    );
    expect([c.outlierDetection, c.transportSocketMatches]).toEqual([undefined, []]);
  });

  it("no service instances: no inbound| clusters, the three fixed ones stay", () => {
    const names = sidecarClusters({ ...inputs, instances: [], services: [] }).map((c) => c.name);
    expect(names).toEqual(["BlackHoleCluster", "PassthroughCluster", "InboundPassthroughCluster"]);
  });
});
