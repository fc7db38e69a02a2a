/**
 * LDS/RDS over the cluster side's own fixture (bookinfo.ts of the CDS golden tests: a gRPC port, a
 * sniffed port, a headless TCP service, a DNS ServiceEntry, services sharing one VIP): every
 * Listener and RouteConfiguration passes PGV and names only clusters sidecarClusters makes for the
 * same inputs (and every EDS cluster has its assignment), as istiod's LDS/RDS/CDS agree.
 */
import { describe, expect, it } from "vitest";
import { bookinfoInputs } from "./bookinfo.ts";
import { generateChecked } from "./check.ts";
import { listener, rdsOf, routeConfig, tcpClusterOf, vhosts } from "./inspect.ts";

describe("LDS/RDS against the CDS fixture", () => {
  const { listeners, routes, dangling } = generateChecked(bookinfoInputs());

  it("is consistent with the clusters and assignments made for it", () => {
    expect(dangling).toEqual([]);
  });

  it("listeners: HTTP and gRPC on 0.0.0.0, the sniffed port on its VIP, headless and VIP-less TCP on 0.0.0.0", () => {
    expect(listeners.map((l) => l.name)).toEqual([
      "0.0.0.0_27017",
      "0.0.0.0_443",
      "0.0.0.0_7070",
      "0.0.0.0_9080",
      "10.96.0.1_8000",
      "virtualOutbound",
      "virtualInbound",
    ]);
    expect(tcpClusterOf(listener(listeners, "0.0.0.0_27017").filterChains[0])).toBe(
      "outbound|27017||mongodb.default.svc.cluster.local",
    );
    expect(tcpClusterOf(listener(listeners, "0.0.0.0_443").filterChains[0])).toBe(
      "outbound|443||api.example.com",
    );
    expect(listener(listeners, "10.96.0.1_8000").filterChains.map(rdsOf)).toEqual([
      "legacy.default.svc.cluster.local:8000",
    ]);
  });

  it("routes: one VIP shared by several services is a domain of the first virtual host only", () => {
    expect(routes.map((r) => r.name)).toEqual(["7070", "9080", "legacy.default.svc.cluster.local:8000"]);
    const hosts = vhosts(routeConfig(routes, "9080"));
    expect(hosts.map(([n]) => n)).toEqual([
      "details.default.svc.cluster.local:9080",
      "productpage.default.svc.cluster.local:9080",
      "ratings.default.svc.cluster.local:9080",
      "reviews.default.svc.cluster.local:9080",
      "allow_any",
    ]);
    expect(hosts.filter(([, d]) => d.includes("10.96.0.1")).map(([n]) => n)).toEqual([
      "details.default.svc.cluster.local:9080",
    ]);
  });
});
