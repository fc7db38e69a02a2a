/**
 * Gateway proxies end to end through the real Node runtime: Istio Gateways and VirtualServices
 * posted through the real ingest POST, and a raw ADS client posing as the ingress gateway
 * (`router~…`, LABELS istio=ingressgateway) over Delta and SotW. It receives the gateway set as
 * istiod names it (listeners `0.0.0.0_<port>`, routes `http.<port>` and
 * `https.<port>.<portName>.<gw>.<ns>`, outbound clusters and BlackHoleCluster), every resource
 * checked against Envoy's PGV rules and cross-referenced; a gateway-bound VirtualService change
 * reaches it and not the sidecars; a sidecar and a proxyless client are served as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { virtualService } from "../../unit/ingest/support/istio.ts";
import { openDelta } from "../delta/delta-client.ts";
import { apply } from "../delta/mesh.ts";
import { bookinfoEvents, nameOf, productpageNode } from "../sidecar/bookinfo-mesh.ts";
import { holder, subscribeAll } from "../sidecar/delta-holder.ts";
import { openAds } from "../support/ads-client.ts";
import { event } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS, route: RDS } = TypeUrl;
const host = (name: string) => `${name}.default.svc.cluster.local`;
const GW_NS = "istio-system";

/** An Istio Gateway selecting the ingress gateway, as a watch delivers it. */
function gateway(name: string, servers: unknown[], resourceVersion = "1") {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: GW_NS, resourceVersion },
    spec: { selector: { istio: "ingressgateway" }, servers },
  };
}

/** The ingress gateway's node as istio-proxy sends it (optionally as a proxyless client). */
function routerNode(generator?: "grpc") {
  return {
    id: `router~10.1.9.1~istio-ingressgateway-5d8f7c-abcde.${GW_NS}~${GW_NS}.svc.cluster.local`,
    metadata: {
      LABELS: { istio: "ingressgateway", app: "istio-ingressgateway" },
      NAMESPACE: GW_NS,
      CLUSTER_ID: "Kubernetes",
      ISTIO_VERSION: "1.30.3",
      ...(generator && { GENERATOR: generator }),
    },
  };
}

const bound = (name: string, hosts: string[], gw: string, dest: string, resourceVersion = "1") =>
  virtualService(
    name,
    { gateways: [gw], http: [{ route: [{ destination: { host: dest, port: { number: 9080 } } }] }] },
    { hosts, resourceVersion },
  );

function gatewayEvents(): unknown[] {
  return [
    event(
      "ADDED",
      gateway("bookinfo-gateway", [
        {
          port: { number: 80, name: "http", protocol: "HTTP" },
          hosts: ["bookinfo.example.com", "reviews.example.com"],
        },
      ]),
    ),
    event(
      "ADDED",
      gateway("secure", [
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["secure.example.com"],
          tls: { mode: "SIMPLE", credentialName: "bookinfo-cert" },
        },
      ]),
    ),
    event(
      "ADDED",
      gateway("passthrough", [
        {
          port: { number: 8443, name: "tls", protocol: "TLS" },
          hosts: ["*.tls.example.com"],
          tls: { mode: "PASSTHROUGH" },
        },
      ]),
    ),
    event(
      "ADDED",
      bound("bookinfo", ["bookinfo.example.com"], "istio-system/bookinfo-gateway", "productpage"),
    ),
    event("ADDED", bound("reviews-gw", ["reviews.example.com"], "istio-system/bookinfo-gateway", "reviews")),
    event("ADDED", bound("secure", ["secure.example.com"], "istio-system/secure", "productpage")),
    event(
      "ADDED",
      virtualService(
        "tls-details",
        {
          gateways: ["istio-system/passthrough"],
          tls: [
            {
              match: [{ port: 8443, sniHosts: ["a.tls.example.com"] }],
              route: [{ destination: { host: "details", port: { number: 9080 } } }],
            },
          ],
        },
        { hosts: ["a.tls.example.com"] },
      ),
    ),
  ];
}

let cp: RunningControlPlane;
const streams: { close(): void }[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  await apply(cp, bookinfoEvents());
  await apply(cp, gatewayEvents());
});
afterAll(async () => {
  for (const s of streams) s.close();
  await cp?.stop();
});

describe("the ingress gateway over Delta ADS", () => {
  const d = () => {
    const s = openDelta(cp.xdsPort);
    streams.push(s);
    return s;
  };

  it("receives the gateway set, every resource valid and every reference served", async () => {
    const g = d();
    const h = holder(g);
    g.send({ typeUrl: CDS, node: routerNode() });
    g.send({ typeUrl: LDS });
    await h.take();
    await subscribeAll(g, h);
    expect(h.names(LDS)).toEqual(["0.0.0.0_443", "0.0.0.0_80", "0.0.0.0_8443"]);
    expect(h.names(RDS)).toEqual(["http.80", "https.443.https.secure.istio-system"]);
    const clusters = h.names(CDS);
    for (const name of ["productpage", "reviews", "details", "ratings"])
      expect(clusters).toContain(`outbound|9080||${host(name)}`);
    expect(clusters).toContain("BlackHoleCluster");
    expect(clusters.filter((c) => c.includes("Passthrough") || c.startsWith("inbound"))).toEqual([]);
    expect(h.names(EDS).length).toBeGreaterThan(0);
    const http = h.routes().get("http.80");
    expect(http?.virtualHosts.map((v) => [v.name, [...v.domains]])).toEqual([
      ["bookinfo.example.com:80", ["bookinfo.example.com"]],
      ["reviews.example.com:80", ["reviews.example.com"]],
    ]);
    const secure = h.listeners().get("0.0.0.0_443");
    expect(secure?.filterChains[0]?.filterChainMatch?.serverNames).toEqual(["secure.example.com"]);
    expect(secure?.filterChains[0]?.transportSocket?.name).toBe("envoy.transport_sockets.tls");
    const passthrough = h.listeners().get("0.0.0.0_8443");
    expect(passthrough?.filterChains.map((c) => c.filterChainMatch?.serverNames)).toEqual([
      ["a.tls.example.com"],
    ]);
    expect(g.dangling()).toEqual([]);
  });

  it("/debug/config_dump?proxyID= reads what the gateway was sent through its Gateways", async () => {
    const g = d();
    const h = holder(g);
    const node = { ...routerNode(), id: routerNode().id.replace("abcde", "dump1") };
    g.send({ typeUrl: CDS, node });
    g.send({ typeUrl: LDS });
    await h.take();
    const url = `http://127.0.0.1:${cp.port}/debug/config_dump?proxyID=${encodeURIComponent(node.id)}`;
    let lds: { resources: { name: string; sent?: string; published?: string }[] } | undefined;
    for (let i = 0; i < 100 && !lds?.resources.length; i++) {
      const r = await fetch(url);
      if (r.ok) {
        const dump = (await r.json()) as { edgepilot: { types: { type_url: string; resources: [] }[] } };
        lds = dump.edgepilot.types.find((t) => t.type_url === LDS);
      }
      if (!lds?.resources.length) await new Promise((res) => setTimeout(res, 50));
    }
    expect(lds?.resources.map((r) => r.name).sort()).toEqual(h.names(LDS));
    for (const r of lds?.resources ?? []) expect(r.published).toBe(r.sent);
  });

  it("a gateway-bound VirtualService change reaches the gateway; a sidecar is sent nothing", async () => {
    const g = d();
    const h = holder(g);
    g.send({ typeUrl: CDS, node: routerNode() });
    g.send({ typeUrl: LDS });
    await h.take();
    await subscribeAll(g, h);
    const s = d();
    const sh = holder(s);
    s.send({ typeUrl: CDS, node: productpageNode() });
    s.send({ typeUrl: LDS });
    await sh.take();
    await subscribeAll(s, sh);
    await apply(cp, [
      event(
        "MODIFIED",
        bound("bookinfo", ["bookinfo.example.com"], "istio-system/bookinfo-gateway", "details", "2"),
      ),
    ]);
    const rs = await h.take();
    expect(rs.map((r) => [r.typeUrl, r.resources.map((x) => x.name)])).toEqual([[RDS, ["http.80"]]]);
    const vh = h
      .routes()
      .get("http.80")
      ?.virtualHosts.find((v) => v.name === "bookinfo.example.com:80");
    const action = vh?.routes[0]?.action;
    expect(action?.case === "route" && action.value.clusterSpecifier.value).toBe(
      `outbound|9080||${host("details")}`,
    );
    expect(await sh.take()).toEqual([]);
    expect(g.dangling()).toEqual([]);
  });

  it("a Gateway change reaches the gateway: a new server is a new listener and route", async () => {
    const g = d();
    const h = holder(g);
    g.send({ typeUrl: CDS, node: routerNode() });
    g.send({ typeUrl: LDS });
    await h.take();
    await apply(cp, [
      event(
        "MODIFIED",
        gateway(
          "bookinfo-gateway",
          [
            {
              port: { number: 80, name: "http", protocol: "HTTP" },
              hosts: ["bookinfo.example.com", "reviews.example.com"],
            },
            { port: { number: 8080, name: "http-alt", protocol: "HTTP" }, hosts: ["bookinfo.example.com"] },
          ],
          "2",
        ),
      ),
    ]);
    await h.take();
    expect(h.names(LDS)).toEqual(["0.0.0.0_443", "0.0.0.0_80", "0.0.0.0_8080", "0.0.0.0_8443"]);
    await subscribeAll(g, h);
    expect(h.names(RDS)).toContain("http.8080");
    expect(g.dangling()).toEqual([]);
  });

  it("a sidecar keeps the sidecar set; a proxyless client, and a router~ node with GENERATOR=grpc, the proxyless set", async () => {
    const s = d();
    const sh = holder(s);
    s.send({ typeUrl: CDS, node: productpageNode() });
    s.send({ typeUrl: LDS });
    await sh.take();
    expect(sh.names(LDS)).toEqual(
      expect.arrayContaining(["virtualOutbound", "virtualInbound", "0.0.0.0_9080"]),
    );
    expect(sh.names(LDS)).not.toContain("0.0.0.0_80");
    for (const node of [productpageNode("grpc"), routerNode("grpc")]) {
      const p = d();
      const ph = holder(p);
      p.send({ typeUrl: CDS, node });
      p.send({ typeUrl: LDS });
      await ph.take();
      expect(ph.names(LDS)).toContain(`${host("reviews")}:9080`);
      expect(ph.names(CDS)).not.toContain("BlackHoleCluster");
    }
  });
});

describe("the ingress gateway over SotW ADS", () => {
  it("receives the same listeners and routes", async () => {
    const s = openAds(cp.xdsPort);
    streams.push(s);
    const got = new Map<string, Set<string>>();
    const takeAll = async (want: Map<string, string[]>) => {
      for (let r = await s.next(500); r; r = await s.next(300)) {
        got.set(r.typeUrl, new Set(r.resources.map((a) => nameOf(r.typeUrl, a.value))));
        s.send({
          typeUrl: r.typeUrl,
          versionInfo: r.versionInfo,
          responseNonce: r.nonce,
          resourceNames: want.get(r.typeUrl) ?? [],
        });
      }
    };
    const want = new Map<string, string[]>();
    s.send({ typeUrl: CDS, node: routerNode() });
    s.send({ typeUrl: LDS });
    await takeAll(want);
    expect([...(got.get(LDS) ?? [])].sort()).toEqual([
      "0.0.0.0_443",
      "0.0.0.0_80",
      "0.0.0.0_8080",
      "0.0.0.0_8443",
    ]);
    want.set(RDS, ["http.80", "http.8080", "https.443.https.secure.istio-system"]);
    s.send({ typeUrl: RDS, resourceNames: want.get(RDS) });
    await takeAll(want);
    expect([...(got.get(RDS) ?? [])].sort()).toEqual(want.get(RDS));
    expect(s.error()).toBe("");
  });
});
