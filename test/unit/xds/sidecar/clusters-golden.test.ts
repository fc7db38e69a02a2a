/**
 * Golden CDS for the bookinfo productpage sidecar, written from Istio's source and docs:
 * - names, order and types: pilot/pkg/networking/core/cluster.go buildClusters (outbound, then
 *   BlackHoleCluster, PassthroughCluster, inbound, InboundPassthroughCluster) and convertResolution;
 *   the table `istioctl proxy-config cluster productpage-v1-...` prints in
 *   https://istio.io/latest/docs/ops/diagnostic-tools/proxy-cmd/ (reviews subsets v1..v3 EDS,
 *   `productpage.default.svc.cluster.local 9080 - inbound ORIGINAL_DST`, BlackHoleCluster STATIC,
 *   InboundPassthroughCluster / PassthroughCluster ORIGINAL_DST; agent, sds-grpc, xds-grpc,
 *   prometheus_stats and zipkin there come from the bootstrap, not CDS);
 * - fields: cluster_builder.go buildCluster / buildInboundCluster / buildDefaultPassthroughCluster /
 *   buildInboundPassthroughCluster / maybeApplyEdsConfig, cluster_traffic_policy.go (default
 *   LEAST_REQUEST, default circuit breakers), cluster_tls.go (auto mTLS transport socket matches).
 */
import { describe, expect, it } from "vitest";
import { sidecarClusters } from "../../../../lib/resources/generators/sidecar/cluster.ts";
import { bookinfoInputs, host, PROXY_IP } from "./bookinfo.ts";
import {
  assertClustersValid,
  byName,
  istioMeta,
  lbName,
  tlsContext,
  typeName,
  upstream,
} from "./cluster-view.ts";

const clusters = sidecarClusters(bookinfoInputs());
const get = (name: string) => byName(clusters, name);
const U32 = 4294967295;

describe("sidecar CDS for bookinfo productpage", () => {
  it("every cluster passes Envoy's PGV rules", () => assertClustersValid(clusters));

  it("names and types, in istiod's order", () => {
    expect(clusters.map((c) => [c.name, typeName(c.message)])).toEqual([
      [`outbound|9080||${host("productpage")}`, "EDS"],
      [`outbound|9080||${host("details")}`, "EDS"],
      [`outbound|9080||${host("ratings")}`, "EDS"],
      [`outbound|9080||${host("reviews")}`, "EDS"],
      [`outbound|9080|v1|${host("reviews")}`, "EDS"],
      [`outbound|9080|v2|${host("reviews")}`, "EDS"],
      [`outbound|9080|v3|${host("reviews")}`, "EDS"],
      [`outbound|7070||${host("echo")}`, "EDS"],
      [`outbound|8000||${host("legacy")}`, "EDS"],
      [`outbound|27017||${host("mongodb")}`, "ORIGINAL_DST"],
      ["outbound|443||api.example.com", "STRICT_DNS"],
      ["BlackHoleCluster", "STATIC"],
      ["PassthroughCluster", "ORIGINAL_DST"],
      ["inbound|9080||", "ORIGINAL_DST"],
      ["InboundPassthroughCluster", "ORIGINAL_DST"],
    ]);
  });

  it("an EDS cluster: endpoints over ADS under its own name, 10s connect timeout, LEAST_REQUEST, default breakers", () => {
    const c = get(`outbound|9080|v2|${host("reviews")}`);
    expect(c.edsClusterConfig?.serviceName).toBe(c.name);
    expect(c.edsClusterConfig?.edsConfig?.configSourceSpecifier.case).toBe("ads");
    expect(c.edsClusterConfig?.edsConfig?.initialFetchTimeout).toMatchObject({ seconds: 0n, nanos: 0 });
    expect(c.connectTimeout).toMatchObject({ seconds: 10n, nanos: 0 });
    expect(lbName(c)).toBe("LEAST_REQUEST");
    expect(c.altStatName).toBe(`${c.name};`);
    expect(c.circuitBreakers?.thresholds).toMatchObject([
      {
        maxConnections: U32,
        maxPendingRequests: U32,
        maxRequests: U32,
        maxRetries: U32,
        trackRemaining: true,
      },
    ]);
    expect(c.commonLbConfig).toBeDefined();
  });

  it("istio metadata: services, default_original_port, config, subset", () => {
    expect(istioMeta(get(`outbound|9080|v2|${host("reviews")}`))).toEqual({
      config: "/apis/networking.istio.io/v1alpha3/namespaces/default/destination-rule/reviews",
      default_original_port: 9080,
      services: [{ host: host("reviews"), name: "reviews", namespace: "default" }],
      subset: "v2",
    });
    expect(istioMeta(get(`outbound|9080||${host("details")}`))).toEqual({
      default_original_port: 9080,
      services: [{ host: host("details"), name: "details", namespace: "default" }],
    });
    expect(istioMeta(get("outbound|443||api.example.com"))).toMatchObject({ external: true });
  });

  it("auto mTLS: tlsMode-istio (ISTIO_MUTUAL over SDS, SNI, SANs) else tlsMode-disabled plaintext", () => {
    const c = get(`outbound|9080|v1|${host("reviews")}`);
    expect(c.transportSocket).toBeUndefined();
    expect(c.transportSocketMatches.map((m) => [m.name, m.match])).toEqual([
      ["tlsMode-istio", { tlsMode: "istio" }],
      ["tlsMode-disabled", {}],
    ]);
    expect(c.transportSocketMatches[1]?.transportSocket?.name).toBe("envoy.transport_sockets.raw_buffer");
    const tls = tlsContext(c, "tlsMode-istio");
    expect(tls?.sni).toBe(`outbound_.9080_.v1_.${host("reviews")}`);
    const common = tls?.commonTlsContext;
    expect(common?.alpnProtocols).toEqual(["istio-peer-exchange", "istio"]);
    expect(common?.tlsCertificateSdsSecretConfigs.map((s) => s.name)).toEqual(["default"]);
    const sds = common?.tlsCertificateSdsSecretConfigs[0]?.sdsConfig?.configSourceSpecifier;
    expect(sds?.case === "apiConfigSource" && sds.value.grpcServices[0]?.targetSpecifier).toMatchObject({
      case: "envoyGrpc",
      value: { clusterName: "sds-grpc" },
    });
    const v = common?.validationContextType;
    expect(v?.case).toBe("combinedValidationContext");
    if (v?.case !== "combinedValidationContext") return;
    expect(v.value.validationContextSdsSecretConfig?.name).toBe("ROOTCA");
    expect(v.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value)).toEqual([
      "spiffe://cluster.local/ns/default/sa/bookinfo-reviews",
    ]);
  });

  it("enableAutoMtls false: plaintext clusters, no SDS reference", () => {
    const inputs = bookinfoInputs();
    const plain = sidecarClusters({ ...inputs, mesh: { ...inputs.mesh, enableAutoMtls: false } });
    const c = byName(plain, `outbound|9080|v1|${host("reviews")}`);
    expect([c.transportSocket, c.transportSocketMatches]).toEqual([undefined, []]);
  });

  it("no auto mTLS for a headless (ORIGINAL_DST) or mesh-external service", () => {
    for (const name of [`outbound|27017||${host("mongodb")}`, "outbound|443||api.example.com"]) {
      const c = get(name);
      expect([c.transportSocket, c.transportSocketMatches]).toEqual([undefined, []]);
    }
  });

  it("upstream protocol: HTTP/2 for gRPC (ALPN h2 too), the downstream's for an unnamed port, none for HTTP", () => {
    expect(upstream(get(`outbound|7070||${host("echo")}`))).toBe("h2");
    expect(
      tlsContext(get(`outbound|7070||${host("echo")}`), "tlsMode-istio")?.commonTlsContext?.alpnProtocols,
    ).toEqual(["istio-peer-exchange", "istio", "h2"]);
    expect(upstream(get(`outbound|8000||${host("legacy")}`))).toBe("downstream");
    expect(upstream(get(`outbound|9080||${host("details")}`))).toBeUndefined();
  });

  it("headless: ORIGINAL_DST, CLUSTER_PROVIDED, no EDS config", () => {
    const c = get(`outbound|27017||${host("mongodb")}`);
    expect([lbName(c), c.edsClusterConfig]).toEqual(["CLUSTER_PROVIDED", undefined]);
  });

  it("ServiceEntry DNS: STRICT_DNS with the host inline, V4_ONLY for an IPv4 proxy, 60s refresh, DNS TTL", () => {
    const c = get("outbound|443||api.example.com");
    expect(c.loadAssignment?.clusterName).toBe(c.name);
    const lb = c.loadAssignment?.endpoints.flatMap((l) => l.lbEndpoints) ?? [];
    const addr =
      lb[0]?.hostIdentifier.case === "endpoint" ? lb[0].hostIdentifier.value.address?.address : undefined;
    expect(addr?.case === "socketAddress" && [addr.value.address, addr.value.portSpecifier.value]).toEqual([
      "api.example.com",
      443,
    ]);
    expect(c.dnsLookupFamily).toBe(1); // V4_ONLY
    expect(c.dnsRefreshRate).toMatchObject({ seconds: 60n });
    expect(c.respectDnsTtl).toBe(true);
  });

  it("a DNS ServiceEntry port without endpoints builds no cluster (istiod's DNSNoEndpointClusters)", () => {
    const inputs = bookinfoInputs();
    const views = inputs.services.map((v) =>
      v.hostname === "api.example.com" ? { ...v, shards: undefined } : v,
    );
    const names = sidecarClusters({ ...inputs, services: views }).map((c) => c.name);
    expect(names).not.toContain("outbound|443||api.example.com");
  });

  it("BlackHoleCluster, PassthroughCluster, InboundPassthroughCluster", () => {
    const bh = get("BlackHoleCluster");
    expect([lbName(bh), bh.loadAssignment, bh.connectTimeout?.seconds]).toEqual([
      "ROUND_ROBIN",
      undefined,
      10n,
    ]);
    const pt = get("PassthroughCluster");
    expect([lbName(pt), upstream(pt), pt.altStatName]).toEqual([
      "CLUSTER_PROVIDED",
      "downstream",
      "PassthroughCluster;",
    ]);
    const ipt = get("InboundPassthroughCluster");
    expect(lbName(ipt)).toBe("CLUSTER_PROVIDED");
    expect(ipt.upstreamBindConfig?.sourceAddress).toMatchObject({
      address: "127.0.0.6",
      portSpecifier: { value: 0 },
    });
    expect(ipt.altStatName).toBe("PassthroughCluster;");
  });

  it("inbound|9080||: ORIGINAL_DST to the pod IP, bound to 127.0.0.6, never cleaned up, productpage metadata", () => {
    const c = get("inbound|9080||");
    expect([lbName(c), c.cleanupInterval?.seconds]).toEqual(["CLUSTER_PROVIDED", 9_223_372_035n]);
    expect(c.upstreamBindConfig?.sourceAddress?.address).toBe("127.0.0.6");
    expect(istioMeta(c)).toEqual({
      services: [{ host: host("productpage"), name: "productpage", namespace: "default" }],
    });
    expect(c.transportSocketMatches).toEqual([]);
    expect(PROXY_IP).toBe("10.0.0.5");
  });

  it("an IPv6-only proxy: DNS V6_ONLY, passthrough bound to ::6", () => {
    const inputs = bookinfoInputs();
    const v6 = sidecarClusters({ ...inputs, proxy: { ...inputs.proxy, ipAddresses: ["fd00::5"] } });
    expect(byName(v6, "outbound|443||api.example.com").dnsLookupFamily).toBe(2); // V6_ONLY
    expect(byName(v6, "InboundPassthroughCluster").upstreamBindConfig?.sourceAddress?.address).toBe("::6");
    expect(byName(v6, "inbound|9080||").upstreamBindConfig?.sourceAddress?.address).toBe("::6");
  });
});
