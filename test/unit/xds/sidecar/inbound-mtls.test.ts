/**
 * A sidecar's inbound side under PeerAuthentication, against istiod's shapes
 * (pilot/pkg/networking/core filterchain_options.go, listener_inbound.go and listener_builder_test.go
 * TestInboundListenerFilters; pilot/pkg/security/authn/utils BuildInboundTLS): the chains of an
 * HTTP, an unnamed (sniffed) and a TCP port under STRICT, PERMISSIVE and DISABLE, the passthrough
 * chains, port-level modes, the TLS context, the listener inspectors and the RBAC filters' place.
 * Every output passes PGV and the reference check.
 */
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  type FilterChain,
  FilterSchema,
  type ListenerFilterChainMatchPredicate,
} from "../../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { Listener } from "../../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { HttpFilterSchema } from "../../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  type DownstreamTlsContext,
  DownstreamTlsContextSchema,
} from "../../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import type { ServicePort } from "../../../../lib/model/index.ts";
import { message } from "../../../../lib/resources/generators/shared.ts";
import type { ServiceInstance, SidecarInputs } from "../../../../lib/resources/generators/sidecar/types.ts";
import { bookinfoInputs, ep, PROXY_IP, svc } from "./bookinfo.ts";
import { generateChecked } from "./check.ts";
import { hcmOf } from "./inspect.ts";
import { meshWide, peer, policies } from "./security.ts";

const ports: ServicePort[] = [
  { name: "http", port: 80, protocol: "HTTP" },
  { name: "", port: 81, protocol: "UnsupportedProtocol" },
  { name: "tcp", port: 82, protocol: "TCP" },
];
const app = svc("app", ports);
/** The proxy serves app's three ports (target port = service port). */
const instances: ServiceInstance[] = ports.map((p) => ({
  service: app,
  servicePort: p,
  targetPort: p.port,
  endpoint: ep(PROXY_IP, p.port, p.name),
}));
const inputs = (o: Partial<SidecarInputs> = {}) => bookinfoInputs({ instances, ...o });

function virtualInbound(i: SidecarInputs): Listener {
  const { listeners, dangling } = generateChecked(i);
  expect(dangling).toEqual([]);
  const l = listeners.find((x) => x.name === "virtualInbound")?.message;
  if (!l) throw new Error("no virtualInbound");
  return l;
}

/** A chain as a row: [terminal filter, transport protocol, ALPN, terminates TLS]. */
const row = (c: FilterChain) => [
  c.filters.at(-1)?.name === "envoy.filters.network.tcp_proxy" ? "tcp" : "http",
  c.filterChainMatch?.transportProtocol,
  (c.filterChainMatch?.applicationProtocols ?? []).join(","),
  c.transportSocket?.name === "envoy.transport_sockets.tls",
];
const onPort = (l: Listener, port: number) =>
  l.filterChains.filter((c) => (c.filterChainMatch?.destinationPort ?? 0) === port);

const MTLS_HTTP = "istio-http/1.0,istio-http/1.1,istio-h2";
const ALL_MTLS = "istio,istio-peer-exchange,istio-http/1.0,istio-http/1.1,istio-h2";
const PLAIN_HTTP = "http/1.1,h2c";

describe("inbound chains per port kind and mode (getFilterChainMatchOptions)", () => {
  it.each([
    ["STRICT", 80, [["http", "tls", "", true]]],
    [
      "STRICT",
      81,
      [
        ["http", "tls", MTLS_HTTP, true],
        ["tcp", "tls", "", true],
      ],
    ],
    ["STRICT", 82, [["tcp", "tls", "", true]]],
    [
      "PERMISSIVE",
      80,
      [
        ["http", "tls", ALL_MTLS, true],
        ["http", "raw_buffer", "", false],
      ],
    ],
    [
      "PERMISSIVE",
      81,
      [
        ["http", "tls", MTLS_HTTP, true],
        ["http", "raw_buffer", PLAIN_HTTP, false],
        ["tcp", "tls", "istio-peer-exchange,istio", true],
        ["tcp", "raw_buffer", "", false],
        ["tcp", "tls", "", false],
      ],
    ],
    [
      "PERMISSIVE",
      82,
      [
        ["tcp", "tls", ALL_MTLS, true],
        ["tcp", "tls", "", false],
        ["tcp", "raw_buffer", "", false],
      ],
    ],
    ["DISABLE", 80, [["http", "raw_buffer", "", false]]],
    [
      "DISABLE",
      81,
      [
        ["http", "raw_buffer", PLAIN_HTTP, false],
        ["tcp", "raw_buffer", "", false],
      ],
    ],
    ["DISABLE", 82, [["tcp", "raw_buffer", "", false]]],
  ] as const)("%s, port %i", (mode, port, expected) => {
    const l = virtualInbound(inputs({ security: meshWide(mode) }));
    const chains = onPort(l, port);
    expect(chains.map(row)).toEqual(expected);
    expect(new Set(chains.map((c) => c.name))).toEqual(new Set([`0.0.0.0_${port}`]));
  });

  it("the passthrough chains (any port) follow the workload's mode as an unnamed port, named as istiod names them", () => {
    const names = (mode: "STRICT" | "PERMISSIVE" | "DISABLE") =>
      onPort(virtualInbound(inputs({ security: meshWide(mode) })), 0).map((c) => [c.name, ...row(c)]);
    expect(names("STRICT")).toEqual([
      ["virtualInbound-catchall-http", "http", "tls", MTLS_HTTP, true],
      ["virtualInbound", "tcp", "tls", "", true],
    ]);
    expect(names("PERMISSIVE").map((r) => r[0])).toEqual([
      "virtualInbound-catchall-http",
      "virtualInbound-catchall-http",
      "virtualInbound",
      "virtualInbound",
      "virtualInbound",
    ]);
    expect(names("DISABLE").map((r) => r[0])).toEqual(["virtualInbound-catchall-http", "virtualInbound"]);
  });

  it("no policy is PERMISSIVE; the narrowest PeerAuthentication wins (workload ▶ namespace ▶ mesh)", () => {
    expect(onPort(virtualInbound(inputs()), 82).map(row)).toHaveLength(3);
    const workload = peer({
      name: "pp",
      namespace: "default",
      selector: { app: "productpage" },
      mode: "DISABLE",
    });
    const security = policies([
      peer({ mode: "STRICT" }),
      peer({ namespace: "default", mode: "PERMISSIVE" }),
      workload,
    ]);
    expect(onPort(virtualInbound(inputs({ security })), 82).map(row)).toEqual([
      ["tcp", "raw_buffer", "", false],
    ]);
    const other = policies([peer({ mode: "STRICT" }), { ...workload, selector: { app: "ratings" } }]);
    expect(onPort(virtualInbound(inputs({ security: other })), 82).map(row)).toEqual([
      ["tcp", "tls", "", true],
    ]);
  });

  it("portLevelMtls: a declared port takes its mode; an undeclared one gets passthrough chains of its own", () => {
    const security = policies([
      peer({
        name: "pp",
        namespace: "default",
        selector: { app: "productpage" },
        mode: "STRICT",
        portLevelMtls: { 80: "DISABLE", 9999: "PERMISSIVE" },
      }),
    ]);
    const l = virtualInbound(inputs({ security }));
    expect(onPort(l, 80).map(row)).toEqual([["http", "raw_buffer", "", false]]);
    expect(onPort(l, 82).map(row)).toEqual([["tcp", "tls", "", true]]);
    const extra = onPort(l, 9999);
    expect(extra.map((c) => c.name)).toEqual([
      "virtualInbound-catchall-http",
      "virtualInbound-catchall-http",
      "virtualInbound",
      "virtualInbound",
      "virtualInbound",
    ]);
    // Still a passthrough chain: its cluster, its stat prefix, service port 0.
    const hcm = hcmOf(extra[1]);
    const rc = hcm?.routeSpecifier.case === "routeConfig" ? hcm.routeSpecifier.value : undefined;
    expect([hcm?.statPrefix, rc?.name, rc?.virtualHosts[0]?.name]).toEqual([
      "InboundPassthroughCluster;",
      "InboundPassthroughCluster",
      "inbound|http|0",
    ]);
    // buildInboundPassthroughChains: blackhole, any-port passthrough, per-port passthrough, then services.
    const order = l.filterChains.map((c) => c.filterChainMatch?.destinationPort ?? 0);
    expect(order.indexOf(9999)).toBeGreaterThan(order.lastIndexOf(0));
    expect(order.indexOf(9999)).toBeLessThan(order.indexOf(80));
  });
});

describe("the DownstreamTlsContext of an mTLS chain (BuildInboundTLS)", () => {
  const tlsOf = (c: FilterChain | undefined): DownstreamTlsContext => {
    const t = c?.transportSocket?.configType;
    if (t?.case !== "typedConfig") throw new Error("no TLS transport socket");
    return anyUnpack(t.value, DownstreamTlsContextSchema) as DownstreamTlsContext;
  };
  const mesh = { ...bookinfoInputs().mesh, trustDomain: "corp.example", trustDomainAliases: ["old.example"] };
  const l = virtualInbound(inputs({ security: meshWide("STRICT"), mesh }));

  it("requires a client certificate; default and ROOTCA over SDS from sds-grpc; the trust domains' SPIFFE prefixes", () => {
    const ctx = tlsOf(onPort(l, 80)[0]);
    expect(ctx.requireClientCertificate).toBe(true);
    const common = ctx.commonTlsContext;
    const sdsCluster = (s: (typeof common & {})["tlsCertificateSdsSecretConfigs"][number] | undefined) => {
      const src = s?.sdsConfig?.configSourceSpecifier;
      const g = src?.case === "apiConfigSource" ? src.value.grpcServices[0]?.targetSpecifier : undefined;
      return [s?.name, g?.case === "envoyGrpc" ? g.value.clusterName : undefined];
    };
    expect(sdsCluster(common?.tlsCertificateSdsSecretConfigs[0])).toEqual(["default", "sds-grpc"]);
    const v = common?.validationContextType;
    if (v?.case !== "combinedValidationContext") throw new Error("no combined validation context");
    expect(sdsCluster(v.value.validationContextSdsSecretConfig)).toEqual(["ROOTCA", "sds-grpc"]);
    expect(v.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern)).toEqual([
      { case: "prefix", value: "spiffe://corp.example/" },
      { case: "prefix", value: "spiffe://old.example/" },
    ]);
    expect(common?.tlsParams?.cipherSuites).toEqual([
      "ECDHE-ECDSA-AES256-GCM-SHA384",
      "ECDHE-RSA-AES256-GCM-SHA384",
      "ECDHE-ECDSA-AES128-GCM-SHA256",
      "ECDHE-RSA-AES128-GCM-SHA256",
      "AES256-GCM-SHA384",
      "AES128-GCM-SHA256",
    ]);
  });

  it("ALPN: h2, http/1.1 on HTTP chains; istio-peer-exchange first on TCP chains", () => {
    expect(tlsOf(onPort(l, 80)[0]).commonTlsContext?.alpnProtocols).toEqual(["h2", "http/1.1"]);
    expect(tlsOf(onPort(l, 82)[0]).commonTlsContext?.alpnProtocols).toEqual([
      "istio-peer-exchange",
      "h2",
      "http/1.1",
    ]);
  });
});

/** EvaluateListenerFilterPredicates: whether the predicate matches (the filter is disabled on) `port`. */
function matches(p: ListenerFilterChainMatchPredicate | undefined, port: number): boolean {
  const r = p?.rule;
  switch (r?.case) {
    case "destinationPortRange":
      return port >= r.value.start && port < r.value.end;
    case "orMatch":
      return r.value.rules.some((x) => matches(x, port));
    case "notMatch":
      return !matches(r.value, port);
    default:
      return false;
  }
}

describe("listener inspectors (istiod's TestInboundListenerFilters)", () => {
  // true: the inspector is disabled on that port; 1000 stands for a port no chain declares.
  it.each([
    [
      "PERMISSIVE",
      { 80: true, 82: true, 81: false, 1000: false },
      { 80: false, 82: false, 81: false, 1000: false },
    ],
    ["DISABLE", { 80: true, 82: true, 81: false, 1000: false }, undefined],
    ["STRICT", undefined, { 80: false, 82: false, 81: false, 1000: false }],
  ] as const)("%s", (mode, http, tls) => {
    const l = virtualInbound(inputs({ security: meshWide(mode) }));
    expect(l.listenerFilters[0]?.name).toBe("envoy.filters.listener.original_dst");
    const find = (name: string) => l.listenerFilters.find((f) => f.name === `envoy.filters.listener.${name}`);
    const check = (name: string, want: Record<number, boolean> | undefined) => {
      const f = find(name);
      expect(f === undefined, name).toBe(want === undefined);
      for (const [port, disabled] of Object.entries(want ?? {}))
        expect(matches(f?.filterDisabled, Number(port)), `${name} ${port}`).toBe(disabled);
    };
    check("http_inspector", http);
    check("tls_inspector", tls);
    // The TLS inspector runs before the HTTP inspector.
    expect(l.listenerFilters.map((f) => f.name.replace("envoy.filters.listener.", ""))).toEqual([
      "original_dst",
      ...(tls ? ["tls_inspector"] : []),
      ...(http ? ["http_inspector"] : []),
    ]);
  });
});

describe("RBAC filters (an input: lib/resources/authz/ builds them)", () => {
  const rbacHttp = message(HttpFilterSchema, { name: "envoy.filters.http.rbac" });
  const rbacTcp = message(FilterSchema, { name: "envoy.filters.network.rbac" });
  const l = virtualInbound(
    inputs({ security: meshWide("PERMISSIVE"), authz: { http: [rbacHttp], tcp: [rbacTcp] } }),
  );

  it("go first in every inbound HCM and before every inbound tcp_proxy, passthrough chains included", () => {
    const served = l.filterChains.filter((c) => c.name !== "virtualInbound-blackhole");
    for (const c of served) {
      const hcm = hcmOf(c);
      if (hcm) expect(hcm.httpFilters.map((f) => f.name)[0], c.name).toBe("envoy.filters.http.rbac");
      else
        expect(
          c.filters.map((f) => f.name),
          c.name,
        ).toEqual(["envoy.filters.network.rbac", "envoy.filters.network.tcp_proxy"]);
    }
    expect(served.length).toBe(5 + 2 + 5 + 3);
  });

  it("never on the blackhole chain", () => {
    const blackhole = l.filterChains.find((c) => c.name === "virtualInbound-blackhole");
    expect(blackhole?.filters.map((f) => f.name)).toEqual(["envoy.filters.network.tcp_proxy"]);
  });
});

describe("a Sidecar ingress listener that binds its port", () => {
  it("gets its mode's chains and the TLS inspector, no original_dst", () => {
    const ingress = {
      name: "pp",
      namespace: "default",
      listeners: [
        {
          port: 9999,
          protocol: "HTTP",
          name: "http",
          bind: "",
          captureMode: "NONE" as const,
          defaultEndpoint: "127.0.0.1:8080",
        },
      ],
    };
    const { listeners } = generateChecked(inputs({ ingress, security: meshWide("STRICT") }));
    const own = listeners.find((x) => x.name === "0.0.0.0_9999")?.message;
    expect(own?.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
    expect(own?.filterChains.map(row)).toEqual([["http", "tls", "", true]]);
  });
});
