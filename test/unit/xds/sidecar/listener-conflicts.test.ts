/**
 * Outbound listener conflicts on one (bind, port), as istiod's buildSidecarOutboundListener resolves
 * them (pilot/pkg/networking/core/listener.go: HTTPOverTCP, TCPOverHTTP, TCPOverTCP, AutoOverHTTP,
 * AutoOverTCP), plus headless binds, Alias services, UDP ports and inbound instances.
 */
import { describe, expect, it } from "vitest";
import type { Protocol, ServicePort } from "../../../../lib/model/index.ts";
import { endpoint, shards } from "../builders.ts";
import { drModel } from "../istio-views.ts";
import { bookinfoInputs, productpageInstance, svcView } from "./bookinfo-routes.ts";
import { generateChecked } from "./check.ts";
import { listener, rdsOf, routeConfig, tcpClusterOf, tcpOf, vhosts } from "./inspect.ts";
import { meshWide } from "./security.ts";

const p = (port: number, protocol: Protocol, name = protocol.toLowerCase()): ServicePort => ({
  name,
  port,
  protocol,
});
const H = (n: string) => `${n}.default.svc.cluster.local`;

// Plaintext inbound (mTLS DISABLE mesh-wide): these tests are about ports and protocols, not TLS.
function run(services: ReturnType<typeof svcView>[], instances = [productpageInstance()]) {
  const out = generateChecked(bookinfoInputs({ services, instances, security: meshWide("DISABLE") }));
  expect(out.dangling).toEqual([]);
  return out;
}

describe("outbound listener conflicts", () => {
  it("headless TCP and HTTP on one port share 0.0.0.0_<port>: HTTP by ALPN, the TCP service as default chain", () => {
    const { listeners } = run([
      svcView("web", [p(3000, "HTTP")], ["10.96.2.1"]),
      svcView("db", [p(3000, "TCP")], [], { resolution: "Passthrough" }),
    ]);
    const l = listener(listeners, "0.0.0.0_3000");
    expect(l.filterChains.map(rdsOf)).toEqual(["3000"]);
    expect(tcpClusterOf(l.defaultFilterChain)).toBe(`outbound|3000||${H("db")}`);
    expect(listeners.map((x) => x.name)).toEqual(["0.0.0.0_3000", "virtualOutbound", "virtualInbound"]);
  });

  it("TLS services without a VIP share 0.0.0.0_<port> by SNI; other TLS traffic passes through", () => {
    // listener.go buildSidecarOutboundTLSFilterChainOpts: no VIP ▶ sniHosts [hostname]; the TLS
    // inspector reads the SNI (buildListenerFromEntry), the PassthroughFilterChain takes the rest.
    // A match-all chain here would send every TLS connection on 443 to one external host.
    const { listeners } = run([
      svcView("b-api", [p(443, "TLS")], [], {
        hostname: "api.b.example",
        view: { hostname: "api.b.example" },
      }),
      svcView("a-api", [p(443, "HTTPS")], [], {
        hostname: "api.a.example",
        view: { hostname: "api.a.example" },
      }),
      svcView("vip-tls", [p(443, "TLS")], ["10.96.3.1"]),
    ]);
    const l = listener(listeners, "0.0.0.0_443");
    expect(l.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
    expect(l.filterChains.map((c) => [c.filterChainMatch?.serverNames, tcpClusterOf(c)])).toEqual([
      [["api.a.example"], "outbound|443||api.a.example"],
      [["api.b.example"], "outbound|443||api.b.example"],
    ]);
    expect(l.defaultFilterChain?.name).toBe("PassthroughFilterChain");
    expect(tcpClusterOf(l.defaultFilterChain)).toBe("PassthroughCluster");
    // With a VIP the listener is the VIP's, one match-all chain, no inspector.
    const vip = listener(listeners, "10.96.3.1_443");
    expect(vip.listenerFilters).toEqual([]);
    expect(vip.filterChains.map((c) => [c.filterChainMatch, tcpClusterOf(c)])).toEqual([
      [undefined, `outbound|443||${H("vip-tls")}`],
    ]);
  });

  it("MySQL and Mongo share a listener with no other protocol (isConflictWithWellKnownPort)", () => {
    // An HTTP inspector would wait for the client's first bytes, and MySQL's server speaks first.
    const { listeners, routes } = run([
      svcView("a-web", [p(3306, "HTTP")], ["10.96.2.5"]),
      svcView("b-db", [p(3306, "MySQL")], [], { resolution: "Passthrough" }),
      svcView("c-db", [p(27017, "Mongo")], [], { resolution: "Passthrough" }),
      svcView("d-raw", [p(27017, "UnsupportedProtocol", "")], [], { resolution: "Passthrough" }),
    ]);
    // HTTP came first (hostname order): the MySQL service is left out, the HTTP listener stays.
    expect(listener(listeners, "0.0.0.0_3306").filterChains.map(rdsOf)).toEqual(["3306"]);
    expect(tcpClusterOf(listener(listeners, "0.0.0.0_3306").defaultFilterChain)).toBe("PassthroughCluster");
    // Mongo came first: the sniffed service is left out, no inspector on the Mongo listener.
    const mongo = listener(listeners, "0.0.0.0_27017");
    expect(mongo.listenerFilters).toEqual([]);
    expect(mongo.filterChains.map(tcpClusterOf)).toEqual([`outbound|27017||${H("c-db")}`]);
    expect(routes.map((r) => r.name)).toEqual(["3306"]);
  });

  it("a DestinationRule's consistentHash.useSourceIp hashes the tcp_proxy on the source IP (maybeSetHashPolicy)", () => {
    const dr = drModel({ trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true } } } });
    const { listeners } = run([
      svcView("db", [p(5432, "TCP")], ["10.96.4.1"], { view: { destinationRule: dr } }),
      svcView("cache", [p(6379, "TCP")], ["10.96.4.2"]),
    ]);
    const hash = (name: string) =>
      tcpOf(listener(listeners, name).filterChains[0])?.hashPolicy.map((h) => h.policySpecifier.case);
    expect(hash("10.96.4.1_5432")).toEqual(["sourceIp"]);
    expect(hash("10.96.4.2_6379")).toEqual([]);
  });

  it("two headless TCP services on one port: the first in hostname order keeps the listener", () => {
    const { listeners } = run([
      svcView("b", [p(5432, "TCP")], [], { resolution: "Passthrough" }),
      svcView("a", [p(5432, "TCP")], [], { resolution: "Passthrough" }),
    ]);
    expect(listener(listeners, "0.0.0.0_5432").filterChains.map(tcpClusterOf)).toEqual([
      `outbound|5432||${H("a")}`,
    ]);
  });

  it("a headless sniffed port over HTTP replaces it (AutoOverHTTP) and shares RDS <port>", () => {
    const { listeners, routes } = run([
      svcView("a-web", [p(8080, "HTTP")], ["10.96.2.2"]),
      svcView("b-raw", [p(8080, "UnsupportedProtocol", "")], [], { resolution: "Passthrough" }),
    ]);
    const l = listener(listeners, "0.0.0.0_8080");
    expect(l.filterChains.map(rdsOf)).toEqual(["8080"]);
    expect(tcpClusterOf(l.defaultFilterChain)).toBe(`outbound|8080||${H("b-raw")}`);
    // Both services are virtual hosts of RouteConfiguration 8080; the headless one also as *.<name>.
    expect(vhosts(routeConfig(routes, "8080")).map(([n]) => n)).toEqual([
      `${H("a-web")}:8080`,
      `${H("b-raw")}:8080`,
      "allow_any",
    ]);
    expect(vhosts(routeConfig(routes, "8080"))[1]?.[1]).toContain(`*.${H("b-raw")}`);
  });

  it("TCP services on their own VIPs never conflict; Alias services and UDP ports get no listener", () => {
    const { listeners, routes } = run([
      svcView("r1", [p(6379, "Redis")], ["10.96.3.1"]),
      svcView("r2", [p(6379, "Redis")], ["10.96.3.2"]),
      svcView("alias", [p(80, "HTTP")], [], { resolution: "Alias" }),
      svcView("dns", [p(53, "UDP")], ["10.96.3.3"]),
    ]);
    expect(listeners.map((x) => x.name)).toEqual([
      "10.96.3.1_6379",
      "10.96.3.2_6379",
      "virtualOutbound",
      "virtualInbound",
    ]);
    expect(routes).toEqual([]);
  });
});

describe("virtualInbound per instance", () => {
  it("a sniffed inbound port gets an HTTP chain by ALPN and a TCP chain; a TCP port one tcp_proxy chain", () => {
    const web = svcView("web", [p(7000, "UnsupportedProtocol", ""), p(7001, "TCP")], ["10.96.4.1"]);
    const svc = web.services[0];
    if (!svc) throw new Error("no service");
    const instances = svc.ports.map((sp) => ({
      ...productpageInstance(),
      service: svc,
      servicePort: sp,
      targetPort: sp.port + 100,
    }));
    const { listeners } = run([web], instances);
    const l = listener(listeners, "virtualInbound");
    expect(
      l.filterChains.slice(3).map((c) => [c.name, c.filterChainMatch?.destinationPort, c.filters[0]?.name]),
    ).toEqual([
      ["0.0.0.0_7100", 7100, "envoy.filters.network.http_connection_manager"],
      ["0.0.0.0_7100", 7100, "envoy.filters.network.tcp_proxy"],
      ["0.0.0.0_7101", 7101, "envoy.filters.network.tcp_proxy"],
    ]);
    expect(l.filterChains[3]?.filterChainMatch?.applicationProtocols).toEqual(["http/1.1", "h2c"]);
    expect(tcpClusterOf(l.filterChains[5])).toBe("inbound|7101||");
    // The HTTP inspector is off on the TCP port and on 15006 (the blackhole chain sniffs nothing).
    const rule = l.listenerFilters[1]?.filterDisabled?.rule;
    expect(
      rule?.case === "orMatch" &&
        rule.value.rules.map((r) => r.rule.case === "destinationPortRange" && r.rule.value.start),
    ).toEqual([7101, 15006]);
  });
});

describe("ServiceEntry hosts", () => {
  const external = (hostname: string, ports: ServicePort[], addresses: string[]) => {
    const v = svcView("x", ports, addresses, { meshExternal: true });
    const svc = { ...(v.services[0] as NonNullable<(typeof v.services)[0]>), hostname, name: hostname };
    // As the ServiceEntry registry gives a DNS entry without endpoints: its host, on each port.
    const eps = ports.map((sp) => endpoint({ address: hostname, port: sp.port, servicePortName: sp.name }));
    return {
      ...v,
      hostname,
      services: [svc],
      shards: { ...shards({ "External/Kubernetes": eps }), hostname },
    };
  };

  it("a DNS entry without an address: TCP on 0.0.0.0, HTTP vhost with only its host as domain", () => {
    const { listeners, routes } = run([
      external("api.example.com", [p(443, "TLS")], []),
      external("httpbin.org", [p(80, "HTTP")], ["0.0.0.0"]),
    ]);
    expect(listeners.map((x) => x.name)).toEqual([
      "0.0.0.0_443",
      "0.0.0.0_80",
      "virtualOutbound",
      "virtualInbound",
    ]);
    expect(listener(listeners, "0.0.0.0_443").filterChains.map(tcpClusterOf)).toEqual([
      "outbound|443||api.example.com",
    ]);
    expect(vhosts(routeConfig(routes, "80"))).toEqual([
      ["httpbin.org:80", ["httpbin.org"]],
      ["allow_any", ["*"]],
    ]);
  });
});
