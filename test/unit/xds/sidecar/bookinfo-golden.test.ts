/**
 * Golden shapes of a bookinfo productpage sidecar's Listeners and RouteConfigurations, as
 * `istioctl proxy-config listeners|routes` shows them for istiod's output, written from Istio's
 * source (pilot/pkg/networking/core: listener.go buildSidecarOutboundListener and
 * buildListenerFromEntry, listener_builder.go buildVirtualOutboundListener, listener_inbound.go
 * buildInboundPassthroughChains, httproute.go BuildSidecarOutboundVirtualHosts,
 * generateVirtualHostDomains, buildCatchAllVirtualHost; pilot/pkg/model constants) and its docs
 * (istio.io "Debugging Envoy and Istiod": `istioctl proxy-config listeners` lists
 * 0.0.0.0_9080 with `Route: 9080`, virtualOutbound on 15001, virtualInbound on 15006;
 * "Protocol Selection": unnamed ports are sniffed). Every output passes PGV and the reference check.
 */
import { clone } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TrafficDirection } from "../../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  type FilterChain,
  FilterChainSchema,
} from "../../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import { ListenerSchema } from "../../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { httpConnectionManagerFilter } from "../../../../lib/resources/generators/sidecar/listener-filters.ts";
import { assertEnvoyValid } from "../../../support/xds-check.ts";
import { bookinfoInputs, bookinfoServices, reviewsVs } from "./bookinfo-routes.ts";
import { clustersAndEndpoints, encode, generateChecked } from "./check.ts";
import { hcmOf, listener, rdsOf, routeConfig, routesOf, tcpClusterOf, vhosts } from "./inspect.ts";

const R = "reviews.default.svc.cluster.local";

describe("bookinfo productpage sidecar: listeners", () => {
  const { listeners, dangling } = generateChecked(bookinfoInputs());

  it("names and order: outbound by name, then virtualOutbound, then virtualInbound", () => {
    expect(listeners.map((l) => l.name)).toEqual([
      "0.0.0.0_8000",
      "0.0.0.0_9080",
      "10.96.0.30_27017",
      "10.96.0.40_7070",
      "virtualOutbound",
      "virtualInbound",
    ]);
    expect(dangling).toEqual([]);
  });

  it("outbound listeners do not bind (iptables hands them connections through virtualOutbound)", () => {
    for (const l of listeners.slice(0, 4)) {
      expect(l.message.bindToPort, l.name).toBe(false);
      expect(l.message.trafficDirection, l.name).toBe(TrafficDirection.OUTBOUND);
    }
  });

  it("0.0.0.0_9080: HTTP sniffed by ALPN to RDS 9080, everything else to PassthroughFilterChain", () => {
    const l = listener(listeners, "0.0.0.0_9080");
    expect(l.address?.address.case === "socketAddress" && l.address.address.value.portSpecifier.value).toBe(
      9080,
    );
    // buildListenerFromEntry: the HTTP inspector only (a TLS inspector only for SNI or ALPN chains).
    expect(l.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.http_inspector"]);
    expect(l.filterChains).toHaveLength(1);
    const http = l.filterChains[0];
    expect(http?.filterChainMatch?.applicationProtocols).toEqual(["http/1.1", "h2c"]);
    expect(http?.filterChainMatch?.transportProtocol).toBe("raw_buffer");
    expect(rdsOf(http)).toBe("9080");
    // buildListenerFromEntry: statPrefix util.DelimitedStatsPrefix("outbound_" + name).
    expect(hcmOf(http)?.statPrefix).toBe("outbound_0.0.0.0_9080;");
    expect(l.defaultFilterChain?.name).toBe("PassthroughFilterChain");
    expect(tcpClusterOf(l.defaultFilterChain)).toBe("PassthroughCluster");
  });

  it("10.96.0.30_27017: the TCP service's VIP, one tcp_proxy chain to its cluster, no inspectors", () => {
    const l = listener(listeners, "10.96.0.30_27017");
    expect(l.listenerFilters).toEqual([]);
    expect(l.filterChains.map(tcpClusterOf)).toEqual(["outbound|27017||mongodb.default.svc.cluster.local"]);
    expect(l.defaultFilterChain).toBeUndefined();
  });

  it("10.96.0.40_7070 (unnamed port): sniffed, HTTP by ALPN to RDS <host>:<port>, TCP as the default chain", () => {
    const l = listener(listeners, "10.96.0.40_7070");
    // buildListenerFromEntry: the HTTP inspector only (a TLS inspector only for SNI or ALPN chains).
    expect(l.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.http_inspector"]);
    expect(l.filterChains.map(rdsOf)).toEqual(["legacy.default.svc.cluster.local:7070"]);
    expect(tcpClusterOf(l.defaultFilterChain)).toBe("outbound|7070||legacy.default.svc.cluster.local");
  });

  it("virtualOutbound: 15001, use_original_dst, blackhole for 15001 itself, then the catch-all", () => {
    const l = listener(listeners, "virtualOutbound");
    expect(l.useOriginalDst).toBe(true);
    expect(l.address?.address.case === "socketAddress" && l.address.address.value.portSpecifier.value).toBe(
      15001,
    );
    expect(l.filterChains.map((c) => [c.name, c.filterChainMatch?.destinationPort, tcpClusterOf(c)])).toEqual(
      [
        ["virtualOutbound-blackhole", 15001, "BlackHoleCluster"],
        ["virtualOutbound-catchall-tcp", undefined, "PassthroughCluster"],
      ],
    );
  });

  it("virtualInbound (PERMISSIVE, no policy): 15006, original_dst, blackhole, passthrough, then the instance's port", () => {
    const l = listener(listeners, "virtualInbound");
    expect(l.trafficDirection).toBe(TrafficDirection.INBOUND);
    expect(l.listenerFilters.map((f) => f.name)).toEqual([
      "envoy.filters.listener.original_dst",
      "envoy.filters.listener.tls_inspector",
      "envoy.filters.listener.http_inspector",
    ]);
    // populateListenerFilters: TLS inspection everywhere but 15006 (the blackhole chain needs none);
    // no HTTP sniffing on 9080 (declared HTTP) nor 15006.
    const ports = (i: number) => {
      const rule = l.listenerFilters[i]?.filterDisabled?.rule;
      if (rule?.case === "destinationPortRange") return [rule.value.start];
      return rule?.case === "orMatch"
        ? rule.value.rules.map((r) => (r.rule.case === "destinationPortRange" ? r.rule.value.start : -1))
        : [];
    };
    expect([ports(1), ports(2)]).toEqual([[15006], [9080, 15006]]);
    expect(l.filterChains.map((c) => [c.name, c.filterChainMatch?.destinationPort])).toEqual([
      ["virtualInbound-blackhole", 15006],
      ["virtualInbound-catchall-http", undefined],
      ["virtualInbound-catchall-http", undefined],
      ["virtualInbound", undefined],
      ["virtualInbound", undefined],
      ["virtualInbound", undefined],
      ["0.0.0.0_9080", 9080],
      ["0.0.0.0_9080", 9080],
    ]);
    const inbound = l.filterChains[6];
    const hcm = inbound?.filters[0];
    expect(hcm?.name).toBe("envoy.filters.network.http_connection_manager");
    // listener_inbound.go inboundChainConfig.StatPrefix: util.DelimitedStatsPrefix("inbound_" + the
    // chain's name), the cluster's name for the passthrough chain.
    expect(hcmOf(inbound)?.statPrefix).toBe("inbound_0.0.0.0_9080;");
    expect(hcmOf(l.filterChains[1])?.statPrefix).toBe("InboundPassthroughCluster;");
    expect(tcpClusterOf(l.filterChains[4])).toBe("InboundPassthroughCluster");
  });
});

describe("bookinfo productpage sidecar: routes", () => {
  const { routes, dangling } = generateChecked(bookinfoInputs());

  it("one RouteConfiguration per RDS name the listeners take", () => {
    expect(routes.map((r) => r.name)).toEqual(["8000", "9080", "legacy.default.svc.cluster.local:7070"]);
    expect(dangling).toEqual([]);
    for (const r of routes) {
      expect(r.message.validateClusters, r.name).toBe(false);
      expect(r.message.ignorePortInHostMatching, r.name).toBe(true);
    }
  });

  it("9080: a virtual host per service sorted by name, Istio's domains without ports, allow_any last", () => {
    expect(vhosts(routeConfig(routes, "9080"))).toEqual([
      [
        "details.default.svc.cluster.local:9080",
        [
          "details.default.svc.cluster.local",
          "details",
          "details.default.svc",
          "details.default",
          "10.96.0.12",
        ],
      ],
      [
        "productpage.default.svc.cluster.local:9080",
        [
          "productpage.default.svc.cluster.local",
          "productpage",
          "productpage.default.svc",
          "productpage.default",
          "10.96.0.20",
        ],
      ],
      [
        "ratings.default.svc.cluster.local:9080",
        [
          "ratings.default.svc.cluster.local",
          "ratings",
          "ratings.default.svc",
          "ratings.default",
          "10.96.0.11",
        ],
      ],
      [`${R}:9080`, [R, "reviews", "reviews.default.svc", "reviews.default", "10.96.0.10"]],
      ["allow_any", ["*"]],
    ]);
  });

  it("8000: a service of another namespace gets no bare short name", () => {
    expect(vhosts(routeConfig(routes, "8000"))).toEqual([
      [
        "httpbin.other.svc.cluster.local:8000",
        ["httpbin.other.svc.cluster.local", "httpbin.other", "httpbin.other.svc", "10.96.0.50"],
      ],
      ["allow_any", ["*"]],
    ]);
  });

  it("reviews: the VirtualService's routes in order, to subset clusters; others: the default route", () => {
    const rc = routeConfig(routes, "9080");
    expect(routesOf(rc, `${R}:9080`)).toEqual([
      ["jason", `outbound|9080|v2|${R}`],
      ["split", `outbound|9080|v1|${R}=50,outbound|9080|v3|${R}=50`],
    ]);
    expect(routesOf(rc, "ratings.default.svc.cluster.local:9080")).toEqual([
      ["default", "outbound|9080||ratings.default.svc.cluster.local"],
    ]);
    expect(routesOf(rc, "allow_any")).toEqual([["allow_any", "PassthroughCluster"]]);
  });

  it("VirtualService routes get the sidecar's timeout, retry host selection and decorator", () => {
    const vh = routeConfig(routes, "9080").virtualHosts.find((v) => v.name === `${R}:9080`);
    const [jason, split] = vh?.routes ?? [];
    const a = jason?.action.case === "route" ? jason.action.value : undefined;
    expect(a?.timeout).toEqual(a?.maxGrpcTimeout);
    expect(a?.maxStreamDuration).toBeUndefined();
    expect(a?.retryPolicy?.hostSelectionRetryMaxAttempts).toBe(5n);
    expect(a?.retryPolicy?.retryHostPredicate.map((p) => p.name)).toEqual([
      "envoy.retry_host_predicates.previous_hosts",
    ]);
    // getRouteOperation: one cluster ▶ its host:port; a split ▶ the VirtualService's name.
    expect(jason?.decorator?.operation).toBe(`${R}:9080/*`);
    expect(split?.decorator?.operation).toBe(`${reviewsVs.name}:9080/*`);
  });

  it("without the VirtualService reviews gets the default route with Istio's retry policy", () => {
    const { routes: plain } = generateChecked(bookinfoInputs({ services: bookinfoServices(false) }));
    const rc = routeConfig(plain, "9080");
    expect(routesOf(rc, `${R}:9080`)).toEqual([["default", `outbound|9080||${R}`]]);
    const route = rc.virtualHosts.find((v) => v.name === `${R}:9080`)?.routes[0];
    const action = route?.action.case === "route" ? route.action.value : undefined;
    expect(action?.retryPolicy?.retryOn).toBe(
      "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
    );
    expect(action?.retryPolicy?.numRetries).toBe(2);
    expect(action?.retryPolicy?.retryHostPredicate.map((p) => p.name)).toEqual([
      "envoy.retry_host_predicates.previous_hosts",
    ]);
    expect(route?.decorator?.operation).toBe(`${R}:9080/*`);
  });

  it("the sniffed port's RouteConfiguration: its one virtual host, domains *, no catch-all", () => {
    expect(vhosts(routeConfig(routes, "legacy.default.svc.cluster.local:7070"))).toEqual([
      ["legacy.default.svc.cluster.local:7070", ["*"]],
    ]);
  });
});

describe("outboundTrafficPolicy REGISTRY_ONLY", () => {
  const inputs = bookinfoInputs();
  const { listeners, routes, dangling } = generateChecked({
    ...inputs,
    mesh: { ...inputs.mesh, outboundTrafficPolicy: "REGISTRY_ONLY" },
  });

  it("block_all answers 502; unknown TCP goes to BlackHoleCluster", () => {
    expect(routesOf(routeConfig(routes, "9080"), "block_all")).toEqual([["block_all", "direct 502"]]);
    expect(vhosts(routeConfig(routes, "9080")).at(-1)).toEqual(["block_all", ["*"]]);
    expect(tcpClusterOf(listener(listeners, "virtualOutbound").filterChains[1])).toBe("BlackHoleCluster");
    expect(tcpClusterOf(listener(listeners, "0.0.0.0_9080").defaultFilterChain)).toBe("BlackHoleCluster");
    expect(dangling).toEqual([]);
  });
});

describe("INTERCEPTION_MODE TPROXY", () => {
  it("makes both capture listeners transparent; REDIRECT leaves the field unset", () => {
    const base = bookinfoInputs();
    const tproxy = {
      ...base,
      proxy: { ...base.proxy, metadata: { ...base.proxy.metadata, interceptionMode: "TPROXY" as const } },
    };
    const { listeners } = generateChecked(tproxy);
    expect(listener(listeners, "virtualOutbound").transparent).toBe(true);
    expect(listener(listeners, "virtualInbound").transparent).toBe(true);
    expect(listener(generateChecked(base).listeners, "virtualInbound").transparent).toBeUndefined();
  });
});

describe("the checks can fail", () => {
  it("PGV rejects an HttpConnectionManager without stat_prefix in a sidecar listener", () => {
    const l = listener(generateChecked(bookinfoInputs()).listeners, "0.0.0.0_9080");
    const chain = clone(FilterChainSchema, l.filterChains[0] as FilterChain);
    chain.filters = [httpConnectionManagerFilter("", "9080")];
    const bad = clone(ListenerSchema, l);
    bad.filterChains = [chain];
    expect(() =>
      assertEnvoyValid([encode({ name: bad.name, schema: ListenerSchema, message: bad })]),
    ).toThrow(/stat_prefix/);
  });

  it("reports a route to a cluster the cluster side does not make", () => {
    // The cluster side as it is without the DestinationRule: no subset clusters.
    const { dangling } = generateChecked(
      bookinfoInputs(),
      clustersAndEndpoints(bookinfoInputs({ services: bookinfoServices(false) })),
    );
    expect(dangling).toEqual([
      `RouteConfiguration "9080": cluster "outbound|9080|v2|${R}" does not exist`,
      `RouteConfiguration "9080": cluster "outbound|9080|v1|${R}" does not exist`,
      `RouteConfiguration "9080": cluster "outbound|9080|v3|${R}" does not exist`,
    ]);
  });
});
