/**
 * Gateway CDS/LDS/RDS as istiod builds them for a `router` proxy (pilot/pkg/networking/core
 * gateway_test.go TestBuildGatewayListeners / TestGatewayHTTPRouteConfig shapes, names as
 * gatewayRDSRouteName and getListenerName give them): every resource PGV-valid, every RDS name and
 * cluster a listener or route names present.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { Listener } from "../../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { VirtualHost_TlsRequirementType } from "../../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import {
  HttpConnectionManager_ForwardClientCertDetails,
  HttpConnectionManagerSchema,
} from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { DownstreamTlsContextSchema } from "../../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import {
  hcmOf,
  listener,
  rdsOf,
  routeConfig,
  routesOf,
  tcpClusterOf,
  vhosts,
} from "../../xds/sidecar/inspect.ts";
import { gateway, gatewayInputs, generateGateway, virtualService } from "./support.ts";

const host = (n: string) => `${n}.default.svc.cluster.local`;
const http80 = { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] };
const bookinfoGw = gateway("bookinfo-gateway", [
  { ...http80, hosts: ["bookinfo.example.com", "reviews.example.com"] },
]);
const bound = (name: string, hosts: string[], dest: string, o: Record<string, unknown> = {}) =>
  virtualService(name, {
    hosts,
    gateways: ["istio-system/bookinfo-gateway"],
    http: [{ route: [{ destination: { host: dest, port: { number: 9080 } } }] }],
    ...o,
  });

function tlsOf(l: Listener, i: number) {
  const ts = l.filterChains[i]?.transportSocket;
  if (!ts || ts.configType.case !== "typedConfig") return undefined;
  return fromBinary(DownstreamTlsContextSchema, ts.configType.value.value);
}

describe("an HTTP gateway with two hosts bound to two VirtualServices", () => {
  const inputs = gatewayInputs(
    [bookinfoGw],
    [
      bound("bookinfo", ["bookinfo.example.com"], "productpage"),
      bound("reviews", ["reviews.example.com"], "reviews"),
    ],
  );
  const out = generateGateway(inputs);

  it("one listener 0.0.0.0_80 bound to its port: one chain, the gateway's connection manager over RDS http.80", () => {
    expect(out.listeners.map((l) => l.name)).toEqual(["0.0.0.0_80"]);
    const l = listener(out.listeners, "0.0.0.0_80");
    expect(l.address?.address.case === "socketAddress" && l.address.address.value.address).toBe("0.0.0.0");
    expect(l.bindToPort).toBeUndefined();
    expect(l.listenerFilters).toEqual([]);
    expect(l.filterChains).toHaveLength(1);
    expect(rdsOf(l.filterChains[0])).toBe("http.80");
    const hcm = hcmOf(l.filterChains[0]);
    expect(hcm?.statPrefix).toBe("outbound_0.0.0.0_80;");
    expect(hcm?.useRemoteAddress).toBe(true);
    expect(hcm?.setCurrentClientCertDetails?.uri).toBe(true);
  });

  it("RDS http.80: one virtual host per bound host, `<host>:80` with that one domain, routes to the VirtualService's destination", () => {
    const rc = routeConfig(out.routes, "http.80");
    expect(vhosts(rc)).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com"]],
      ["reviews.example.com:80", ["reviews.example.com"]],
    ]);
    expect(routesOf(rc, "bookinfo.example.com:80")).toEqual([["", `outbound|9080||${host("productpage")}`]]);
    expect(routesOf(rc, "reviews.example.com:80")).toEqual([["", `outbound|9080||${host("reviews")}`]]);
    expect(rc.ignorePortInHostMatching).toBe(true);
    expect(rc.validateClusters).toBe(false);
  });

  it("clusters: every visible service's outbound clusters and BlackHoleCluster, no passthrough or inbound one", () => {
    const names = out.clusters.map((c) => c.name);
    expect(names).toContain(`outbound|9080||${host("productpage")}`);
    expect(names).toContain(`outbound|9080|v2|${host("reviews")}`);
    expect(names).toContain("BlackHoleCluster");
    expect(names.filter((n) => n.includes("Passthrough") || n.startsWith("inbound"))).toEqual([]);
    expect(out.dangling).toEqual([]);
  });
});

describe("RDS as buildGatewayHTTPRouteConfig", () => {
  it("nothing bound: the 404 blackhole:<port> virtual host", () => {
    const out = generateGateway(gatewayInputs([bookinfoGw], []));
    expect(vhosts(routeConfig(out.routes, "http.80"))).toEqual([["blackhole:80", ["*"]]]);
    expect(routeConfig(out.routes, "http.80").virtualHosts[0]?.routes).toEqual([]);
  });

  it("a VirtualService naming the gateway by short name binds only from the gateway's namespace", () => {
    const short = virtualService("short", {
      hosts: ["bookinfo.example.com"],
      gateways: ["bookinfo-gateway"],
      http: [{ route: [{ destination: { host: host("details") } }] }],
    });
    const same = virtualService(
      "same",
      {
        hosts: ["reviews.example.com"],
        gateways: ["bookinfo-gateway"],
        http: [{ route: [{ destination: { host: host("ratings") } }] }],
      },
      { namespace: "istio-system" },
    );
    const out = generateGateway(gatewayInputs([bookinfoGw], [short, same]));
    expect(vhosts(routeConfig(out.routes, "http.80"))).toEqual([
      ["reviews.example.com:80", ["reviews.example.com"]],
    ]);
  });

  it("a server host's namespace prefix admits only that namespace's VirtualServices; exportTo is judged for the proxy's", () => {
    const gw = gateway("bookinfo-gateway", [
      { ...http80, hosts: ["default/bookinfo.example.com", "other/reviews.example.com"] },
    ]);
    const hidden = bound("hidden", ["bookinfo.example.com"], "details", { exportTo: ["."] });
    const out = generateGateway(
      gatewayInputs(
        [gw],
        [bound("a", ["bookinfo.example.com"], "productpage"), bound("b", ["reviews.example.com"], "reviews")],
      ),
    );
    expect(vhosts(routeConfig(out.routes, "http.80"))).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com"]],
    ]);
    const none = generateGateway(gatewayInputs([gw], [hidden]));
    expect(vhosts(routeConfig(none.routes, "http.80"))).toEqual([["blackhole:80", ["*"]]]);
  });

  it("hosts intersect with wildcards: a `*.example.com` server takes the VirtualService's exact hosts", () => {
    const gw = gateway("bookinfo-gateway", [{ ...http80, hosts: ["*.example.com"] }]);
    const out = generateGateway(
      gatewayInputs([gw], [bound("a", ["bookinfo.example.com", "foo.other.com"], "productpage")]),
    );
    expect(vhosts(routeConfig(out.routes, "http.80"))).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com"]],
    ]);
  });

  it("virtual hosts with the very same routes collapse into the first by name (collapseDuplicateRoutes)", () => {
    const out = generateGateway(
      gatewayInputs(
        [bookinfoGw],
        [bound("both", ["reviews.example.com", "bookinfo.example.com"], "productpage")],
      ),
    );
    expect(vhosts(routeConfig(out.routes, "http.80"))).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com", "reviews.example.com"]],
    ]);
  });

  it("httpsRedirect: the server's virtual hosts require TLS, a host nothing binds gets one of its own", () => {
    const gw = gateway("bookinfo-gateway", [
      { ...http80, hosts: ["bookinfo.example.com", "shop.example.com"], tls: { httpsRedirect: true } },
    ]);
    const out = generateGateway(gatewayInputs([gw], [bound("a", ["bookinfo.example.com"], "productpage")]));
    const rc = routeConfig(out.routes, "http.80");
    expect(vhosts(rc)).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com"]],
      ["shop.example.com:80", ["shop.example.com"]],
    ]);
    expect(rc.virtualHosts.map((v) => v.requireTls)).toEqual([
      VirtualHost_TlsRequirementType.ALL,
      VirtualHost_TlsRequirementType.ALL,
    ]);
  });

  it("match.gateways: a match naming another gateway is left out, one naming this gateway kept", () => {
    const vs = bound("m", ["bookinfo.example.com"], "productpage", {
      http: [
        {
          match: [{ uri: { prefix: "/a" }, gateways: ["mesh"] }],
          route: [{ destination: { host: host("details") } }],
        },
        {
          match: [{ uri: { prefix: "/b" }, gateways: ["istio-system/bookinfo-gateway"] }],
          route: [{ destination: { host: host("ratings") } }],
        },
      ],
    });
    const rc = routeConfig(generateGateway(gatewayInputs([bookinfoGw], [vs])).routes, "http.80");
    expect(rc.virtualHosts[0]?.routes.map((r) => r.match?.pathSpecifier.value)).toEqual(["/b"]);
  });
});

describe("an HTTPS gateway with credentialName", () => {
  const https = (mode: string, o: Record<string, unknown> = {}) =>
    gateway("secure", [
      {
        port: { number: 443, name: "https", protocol: "HTTPS" },
        hosts: ["bookinfo.example.com"],
        tls: { mode, credentialName: "bookinfo-cert", ...o },
      },
    ]);
  const vs = virtualService("bookinfo", {
    hosts: ["bookinfo.example.com"],
    gateways: ["istio-system/secure"],
    http: [{ route: [{ destination: { host: host("productpage") } }] }],
  });

  it("SIMPLE: a chain matching the server's SNI, TLS from SDS kubernetes://<credentialName> over ADS, RDS https.443.https.secure.istio-system", () => {
    const out = generateGateway(gatewayInputs([https("SIMPLE")], [vs]));
    const l = listener(out.listeners, "0.0.0.0_443");
    expect(l.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
    expect(l.filterChains[0]?.filterChainMatch?.serverNames).toEqual(["bookinfo.example.com"]);
    expect(l.filterChains[0]?.transportSocketConnectTimeout?.seconds).toBe(15n);
    expect(rdsOf(l.filterChains[0])).toBe("https.443.https.secure.istio-system");
    const tls = tlsOf(l, 0);
    const sds = tls?.commonTlsContext?.tlsCertificateSdsSecretConfigs ?? [];
    expect(sds.map((s) => s.name)).toEqual(["kubernetes://bookinfo-cert"]);
    expect(sds[0]?.sdsConfig?.configSourceSpecifier.case).toBe("ads");
    expect(tls?.commonTlsContext?.alpnProtocols).toEqual(["h2", "http/1.1"]);
    expect(tls?.requireClientCertificate).toBe(false);
    expect(tls?.commonTlsContext?.validationContextType.case).toBeUndefined();
    expect(vhosts(routeConfig(out.routes, "https.443.https.secure.istio-system"))).toEqual([
      ["bookinfo.example.com:443", ["bookinfo.example.com"]],
    ]);
    expect(out.dangling).toEqual([]);
  });

  it("MUTUAL: client certificates required, validated against kubernetes://<credentialName>-cacert", () => {
    const out = generateGateway(
      gatewayInputs([https("MUTUAL", { subjectAltNames: ["client.example.com"] })], [vs]),
    );
    const tls = tlsOf(listener(out.listeners, "0.0.0.0_443"), 0);
    expect(tls?.requireClientCertificate).toBe(true);
    const v = tls?.commonTlsContext?.validationContextType;
    expect(v?.case).toBe("combinedValidationContext");
    if (v?.case !== "combinedValidationContext") return;
    expect(v.value.validationContextSdsSecretConfig?.name).toBe("kubernetes://bookinfo-cert-cacert");
    expect(v.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value)).toEqual([
      "client.example.com",
    ]);
  });

  it("ISTIO_MUTUAL: the workload certificate `default` and `ROOTCA` from the agent's SDS, as sidecars", () => {
    const out = generateGateway(gatewayInputs([https("ISTIO_MUTUAL", { credentialName: undefined })], [vs]));
    const tls = tlsOf(listener(out.listeners, "0.0.0.0_443"), 0);
    const names = tls?.commonTlsContext?.tlsCertificateSdsSecretConfigs.map((s) => s.name);
    expect(names).toEqual(["default"]);
    const v = tls?.commonTlsContext?.validationContextType;
    expect(v?.case === "combinedValidationContext" && v.value.validationContextSdsSecretConfig?.name).toBe(
      "ROOTCA",
    );
  });

  it("min/max version and cipher suites of a SIMPLE server reach the TLS parameters", () => {
    const out = generateGateway(
      gatewayInputs(
        [https("SIMPLE", { minProtocolVersion: "TLSV1_2", cipherSuites: ["ECDHE-RSA-AES256-GCM-SHA384"] })],
        [vs],
      ),
    );
    const p = tlsOf(listener(out.listeners, "0.0.0.0_443"), 0)?.commonTlsContext?.tlsParams;
    expect(p?.tlsMinimumProtocolVersion).toBe(3);
    expect(p?.cipherSuites).toEqual(["ECDHE-RSA-AES256-GCM-SHA384"]);
  });

  it("two HTTPS servers on one port: one chain each by SNI, each with its own RDS", () => {
    const gw = gateway("secure", [
      {
        port: { number: 443, name: "https-a", protocol: "HTTPS" },
        hosts: ["a.example.com"],
        tls: { mode: "SIMPLE", credentialName: "a" },
      },
      {
        port: { number: 443, name: "https-b", protocol: "HTTPS" },
        hosts: ["b.example.com"],
        tls: { mode: "SIMPLE", credentialName: "b" },
      },
    ]);
    const out = generateGateway(gatewayInputs([gw], []));
    const l = listener(out.listeners, "0.0.0.0_443");
    expect(l.filterChains.map((c) => [c.filterChainMatch?.serverNames, rdsOf(c)])).toEqual([
      [["a.example.com"], "https.443.https-a.secure.istio-system"],
      [["b.example.com"], "https.443.https-b.secure.istio-system"],
    ]);
    expect(out.routes.map((r) => r.name)).toEqual([
      "https.443.https-a.secure.istio-system",
      "https.443.https-b.secure.istio-system",
    ]);
  });
});

describe("a PASSTHROUGH gateway", () => {
  const gw = gateway("passthrough", [
    {
      port: { number: 443, name: "tls", protocol: "TLS" },
      hosts: ["*.example.com"],
      tls: { mode: "PASSTHROUGH" },
    },
  ]);
  const tlsRoute = (name: string, sni: string[], dest: string) =>
    virtualService(name, {
      hosts: sni,
      gateways: ["istio-system/passthrough"],
      tls: [
        {
          match: [{ port: 443, sniHosts: sni }],
          route: [{ destination: { host: dest, port: { number: 9080 } } }],
        },
      ],
    });

  it("one chain per matching tls route, by its sniHosts, tcp_proxy to the destination; no RDS, no TLS context", () => {
    const out = generateGateway(
      gatewayInputs(
        [gw],
        [
          tlsRoute("a", ["a.example.com"], host("productpage")),
          tlsRoute("b", ["b.example.com"], host("details")),
        ],
      ),
    );
    const l = listener(out.listeners, "0.0.0.0_443");
    expect(l.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
    expect(
      l.filterChains.map((c) => [c.filterChainMatch?.serverNames, tcpClusterOf(c), c.transportSocket]),
    ).toEqual([
      [["a.example.com"], `outbound|9080||${host("productpage")}`, undefined],
      [["b.example.com"], `outbound|9080||${host("details")}`, undefined],
    ]);
    expect(out.routes).toEqual([]);
    expect(out.dangling).toEqual([]);
  });

  it("a second route with an SNI host already taken on the port is skipped (CheckDuplicates)", () => {
    const out = generateGateway(
      gatewayInputs(
        [gw],
        [
          tlsRoute("a", ["a.example.com"], host("productpage")),
          tlsRoute("b", ["a.example.com"], host("details")),
        ],
      ),
    );
    expect(listener(out.listeners, "0.0.0.0_443").filterChains.map((c) => tcpClusterOf(c))).toEqual([
      `outbound|9080||${host("productpage")}`,
    ]);
  });

  it("no route matches: no chain, no listener (istiod omits it)", () => {
    expect(generateGateway(gatewayInputs([gw], [])).listeners).toEqual([]);
  });
});

describe("an AUTO_PASSTHROUGH gateway (SNI DNAT)", () => {
  const gw = gateway("cross-network", [
    {
      port: { number: 15443, name: "tls", protocol: "TLS" },
      hosts: ["*.local"],
      tls: { mode: "AUTO_PASSTHROUGH" },
    },
  ]);
  const out = generateGateway(gatewayInputs([gw], []));

  it("a chain per covered service port and subset, matched by `outbound_.<port>_.<subset>_.<host>` and Istio's mTLS ALPNs", () => {
    const chains = listener(out.listeners, "0.0.0.0_15443").filterChains;
    const names = chains.map((c) => c.filterChainMatch?.serverNames[0]);
    expect(names).toContain(`outbound_.9080_._.${host("productpage")}`);
    expect(names).toContain(`outbound_.9080_.v2_.${host("reviews")}`);
    expect(names.some((n) => n?.includes("api.example.com"))).toBe(false);
    for (const c of chains) {
      expect(tcpClusterOf(c)).toBe(c.filterChainMatch?.serverNames[0]);
      expect(c.filterChainMatch?.applicationProtocols).toEqual([
        "istio",
        "istio-peer-exchange",
        "istio-http/1.0",
        "istio-http/1.1",
        "istio-h2",
      ]);
    }
  });

  it("the SNI DNAT clusters: the outbound ones renamed, without TLS, reading the shared assignments", () => {
    const c = out.clusters.find((x) => x.name === `outbound_.9080_.v1_.${host("reviews")}`)?.message;
    expect(c?.transportSocketMatches).toEqual([]);
    expect(c?.edsClusterConfig?.serviceName).toBe(`outbound|9080|v1|${host("reviews")}`);
    expect(out.dangling).toEqual([]);
  });
});

describe("TCP servers", () => {
  it("a plain TCP server takes the first matching tcp route (weighted: stats under <vs>.<ns>)", () => {
    const gw = gateway("tcp", [{ port: { number: 31400, name: "tcp", protocol: "TCP" }, hosts: ["*"] }]);
    const vs = virtualService("db", {
      hosts: ["*"],
      gateways: ["istio-system/tcp"],
      tcp: [
        {
          match: [{ port: 31400 }],
          route: [
            { destination: { host: host("details"), port: { number: 9080 } }, weight: 80 },
            { destination: { host: host("ratings"), port: { number: 9080 } }, weight: 20 },
          ],
        },
      ],
    });
    const out = generateGateway(gatewayInputs([gw], [vs]));
    const l = listener(out.listeners, "0.0.0.0_31400");
    expect(l.filterChains).toHaveLength(1);
    expect(l.filterChains[0]?.filterChainMatch).toBeUndefined();
    expect(out.dangling).toEqual([]);
  });
});

describe("the connection manager is the sidecar's plus the gateway's fields", () => {
  it("decodes as an HttpConnectionManager with SANITIZE_SET client certificate details", () => {
    const out = generateGateway(gatewayInputs([bookinfoGw], []));
    const f = listener(out.listeners, "0.0.0.0_80").filterChains[0]?.filters[0];
    expect(f?.configType.case).toBe("typedConfig");
    if (f?.configType.case !== "typedConfig") return;
    const hcm = fromBinary(HttpConnectionManagerSchema, f.configType.value.value);
    expect(hcm.forwardClientCertDetails).toBe(HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET);
    expect(hcm.httpFilters.map((h) => h.name)).toEqual([
      "envoy.filters.http.fault",
      "envoy.filters.http.router",
    ]);
  });
});
