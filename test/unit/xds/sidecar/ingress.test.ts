/**
 * A sidecar whose Sidecar has ingress listeners, golden from Istio's source
 * (pilot/pkg/networking/core cluster.go buildInboundClusters / buildInboundClustersFromSidecar /
 * findOrCreateService; cluster_builder.go buildInboundCluster / buildInboundLocalityLbEndpoints:
 * STATIC to the defaultEndpoint, ORIGINAL_DST without one, upstream bind 127.0.0.6 unless sent to a
 * loopback; listener_inbound.go buildInboundChainConfigs / getBindToPort / inboundCustomListener /
 * populateListenerFilters: chains `<bind>_<port>` by port ascending, Sidecar config metadata, a
 * listener of its own under captureMode NONE). The instances' ports are not served then (Istio's
 * ENABLE_SIDECAR_SERVICE_INBOUND_LISTENER_MERGE defaults to off). Every resource passes Envoy's PGV
 * rules and the whole set's references are served.
 */
import { describe, expect, it } from "vitest";
import type { SidecarIngress } from "../../../../lib/registry/istio/sidecar.ts";
import { sidecarClusters } from "../../../../lib/resources/generators/sidecar/cluster.ts";
import { ingressEndpoint } from "../../../../lib/resources/generators/sidecar/inbound-ingress.ts";
import type { SidecarInputs } from "../../../../lib/resources/generators/sidecar/types.ts";
import { bookinfoInputs, host, PROXY_IP } from "./bookinfo.ts";
import { generateChecked } from "./check.ts";
import { assertClustersValid, byName, istioMeta, typeName } from "./cluster-view.ts";
import { meshWide } from "./security.ts";

const listener = (o: Partial<SidecarIngress> & { port: number }): SidecarIngress => ({
  protocol: "",
  name: "",
  bind: "",
  captureMode: "DEFAULT",
  defaultEndpoint: "",
  ...o,
});

/** productpage scoped by Sidecar `pp` with `listeners`. */
const inputs = (listeners: SidecarIngress[], o: Partial<SidecarInputs> = {}): SidecarInputs =>
  bookinfoInputs({ ingress: { name: "pp", namespace: "default", listeners }, ...o });

const three = [
  listener({ port: 9080, protocol: "HTTP", name: "http", defaultEndpoint: "127.0.0.1:8080" }),
  listener({ port: 9443, protocol: "TCP", defaultEndpoint: "0.0.0.0:9443" }),
  listener({ port: 9000, defaultEndpoint: "unix:///var/run/app.sock" }),
];

describe("ingressEndpoint (buildInboundClustersFromSidecar)", () => {
  it.each([
    ["127.0.0.1:8080", [PROXY_IP], { address: "127.0.0.1", port: 8080 }],
    ["0.0.0.0:8080", [PROXY_IP], { address: PROXY_IP, port: 8080 }],
    ["0.0.0.0:8080", ["fd00::5"], { address: "127.0.0.1", port: 8080 }],
    ["[::]:8080", ["fd00::5"], { address: "fd00::5", port: 8080 }],
    ["[::]:8080", [PROXY_IP], { address: "::1", port: 8080 }],
    ["[::1]:8080", [PROXY_IP], { address: "127.0.0.1", port: 8080 }],
    ["127.0.0.1:8080", ["fd00::5"], { address: "::1", port: 8080 }],
    [":8080", [PROXY_IP], { address: "", port: 8080 }],
    ["unix:///var/run/app.sock", [PROXY_IP], { address: "unix:///var/run/app.sock", port: 0 }],
    ["", [PROXY_IP], { address: "", port: 0 }],
  ])("%s from %j", (e, ips, want) => expect(ingressEndpoint(e, ips)).toEqual(want));
});

describe("inbound clusters from a Sidecar's ingress", () => {
  const clusters = sidecarClusters(inputs(three));
  const get = (name: string) => byName(clusters, name);

  it("pass Envoy's PGV rules; one per listener, the instances' port only when a listener has it", () => {
    assertClustersValid(clusters);
    const inbound = clusters.filter((c) => c.name.startsWith("inbound|")).map((c) => c.name);
    expect(inbound.sort()).toEqual(["inbound|9000||", "inbound|9080||", "inbound|9443||"]);
    expect(sidecarClusters(inputs([listener({ port: 7000 })])).map((c) => c.name)).not.toContain(
      "inbound|9080||",
    );
  });

  it("a loopback defaultEndpoint: STATIC to it, no upstream bind, the service of that port in metadata", () => {
    const c = get("inbound|9080||");
    expect(typeName(c)).toBe("STATIC");
    const ep = c.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    expect(ep?.case === "endpoint" && ep.value.address?.address).toMatchObject({
      case: "socketAddress",
      value: { address: "127.0.0.1", portSpecifier: { case: "portValue", value: 8080 } },
    });
    expect(c.loadAssignment?.clusterName).toBe("inbound|9080||");
    expect(c.upstreamBindConfig).toBeUndefined();
    expect(istioMeta(c)?.services).toEqual([
      { host: host("productpage"), name: "productpage", namespace: "default" },
    ]);
  });

  it("0.0.0.0: STATIC to the pod IP, bound to 127.0.0.6; no instance on the port: no services metadata", () => {
    const c = get("inbound|9443||");
    expect(typeName(c)).toBe("STATIC");
    const ep = c.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    expect(ep?.case === "endpoint" && ep.value.address?.address).toMatchObject({
      case: "socketAddress",
      value: { address: PROXY_IP },
    });
    expect(c.upstreamBindConfig?.sourceAddress?.address).toBe("127.0.0.6");
    expect(istioMeta(c)?.services).toBeUndefined();
  });

  it("a unix socket: STATIC to the pipe", () => {
    const ep = get("inbound|9000||").loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    expect(ep?.case === "endpoint" && ep.value.address?.address).toMatchObject({
      case: "pipe",
      value: { path: "/var/run/app.sock" },
    });
  });

  it("no defaultEndpoint: ORIGINAL_DST, CLUSTER_PROVIDED, never cleaned up", () => {
    const c = byName(sidecarClusters(inputs([listener({ port: 9080 })])), "inbound|9080||");
    expect(typeName(c)).toBe("ORIGINAL_DST");
    expect(c.cleanupInterval?.seconds).toBe(9_223_372_035n);
    expect(c.loadAssignment).toBeUndefined();
  });
});

describe("inbound listeners from a Sidecar's ingress", () => {
  it("virtualInbound chains `<bind>_<port>` by port, with the Sidecar's metadata; references served", () => {
    const { listeners, dangling } = generateChecked(
      inputs([...three, listener({ port: 7070, bind: "10.0.0.5", protocol: "HTTP" })], {
        security: meshWide("DISABLE"),
      }),
    );
    expect(dangling).toEqual([]);
    const vi = listeners.find((l) => l.name === "virtualInbound")?.message;
    const names = vi?.filterChains.map((c) => c.name);
    expect(names).toEqual([
      "virtualInbound-blackhole",
      "virtualInbound-catchall-http",
      "virtualInbound",
      "10.0.0.5_7070",
      "0.0.0.0_9000",
      "0.0.0.0_9000",
      "0.0.0.0_9080",
      "0.0.0.0_9443",
    ]);
    const chain = vi?.filterChains.find((c) => c.name === "0.0.0.0_9080");
    expect(chain?.filterChainMatch?.destinationPort?.valueOf()).toBe(9080);
    expect(chain?.metadata?.filterMetadata.istio).toEqual({
      config: "/apis/networking.istio.io/v1alpha3/namespaces/default/sidecar/pp",
    });
    // HTTP and TCP ports need no sniffing: the HTTP inspector is off on them (and on 15006).
    const inspector = vi?.listenerFilters.find((f) => f.name === "envoy.filters.listener.http_inspector");
    const rule = inspector?.filterDisabled?.rule;
    expect(
      rule?.case === "orMatch" &&
        rule.value.rules.map((r) => r.rule.case === "destinationPortRange" && r.rule.value.start),
    ).toEqual([7070, 9080, 9443, 15006]);
  });

  it("captureMode NONE: a listener of its own bound to its port, not a virtualInbound chain", () => {
    const { listeners, dangling } = generateChecked(
      inputs(
        [
          listener({ port: 9999, protocol: "HTTP", captureMode: "NONE", defaultEndpoint: "127.0.0.1:8080" }),
          listener({ port: 9998, captureMode: "NONE" }),
        ],
        { security: meshWide("DISABLE") },
      ),
    );
    expect(dangling).toEqual([]);
    const own = listeners.find((l) => l.name === "0.0.0.0_9999")?.message;
    expect(own?.address?.address).toMatchObject({
      case: "socketAddress",
      value: { address: "0.0.0.0", portSpecifier: { case: "portValue", value: 9999 } },
    });
    // No redirect, so no original_dst; an HTTP port needs no sniffing, an unnamed one does.
    expect(own?.listenerFilters.map((f) => f.name)).toEqual([]);
    expect(own?.filterChains.map((c) => c.name)).toEqual(["0.0.0.0_9999"]);
    const sniffed = listeners.find((l) => l.name === "0.0.0.0_9998")?.message;
    expect(sniffed?.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.http_inspector"]);
    const vi = listeners.find((l) => l.name === "virtualInbound")?.message;
    expect(vi?.filterChains.map((c) => c.name)).not.toContain("0.0.0.0_9999");
  });

  it("INTERCEPTION_MODE NONE binds DEFAULT listeners; IPTABLES stays a chain", () => {
    const proxy = bookinfoInputs().proxy;
    const none = { ...proxy, metadata: { ...proxy.metadata, interceptionMode: "NONE" as const } };
    const { listeners } = generateChecked(
      inputs([listener({ port: 9080 }), listener({ port: 9081, captureMode: "IPTABLES" })], { proxy: none }),
    );
    expect(listeners.map((l) => l.name)).toContain("0.0.0.0_9080");
    expect(listeners.map((l) => l.name)).not.toContain("0.0.0.0_9081");
  });
});
