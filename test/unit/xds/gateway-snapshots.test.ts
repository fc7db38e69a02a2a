/**
 * The gateway snapshots of one host over a real memory store holding the bookinfo services, an
 * Istio Gateway and a VirtualService bound to it: which nodes get gateway resources, the sharing
 * rule (replicas share a class; the Gateways selecting a proxy and its port mapping are part of
 * it), and what a push keeps and drops. Every resource served passes Envoy's PGV rules.
 */
import { describe, expect, it } from "vitest";
import type { StoredConfig } from "../../../lib/registry/istio/stored.ts";
import type { Push, ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createGatewaySnapshots, type GatewaySnapshots } from "../../../lib/xds/gateway-snapshots.ts";
import { createSidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { assertEnvoyValid } from "../../support/xds-check.ts";
import { bookinfoViews, ep, svc, sview } from "./sidecar/bookinfo.ts";

const { cluster: CDS, listener: LDS, route: RDS, endpoint: EDS } = TypeUrl;
const GW_NS = "istio-system";

const node = (
  ip: string,
  pod: string,
  labels: Record<string, string> = { istio: "ingressgateway" },
  type = "router",
) => ({
  id: `${type}~${ip}~${pod}.${GW_NS}~${GW_NS}.svc.cluster.local`,
  metadata: { NAMESPACE: GW_NS, CLUSTER_ID: "Kubernetes", LABELS: labels },
});

const config = <K extends "Gateway" | "VirtualService">(
  kind: K,
  name: string,
  namespace: string,
  spec: unknown,
): StoredConfig<K> => ({
  kind,
  name,
  namespace,
  clusterId: "Kubernetes",
  resourceVersion: "1",
  labels: {},
  spec,
});

async function gatewayStore() {
  const store = createMemoryStore();
  const gwService = sview(
    {
      ...svc("istio-ingressgateway", [{ name: "http", port: 80, protocol: "HTTP" }]),
      namespace: GW_NS,
      hostname: `istio-ingressgateway.${GW_NS}.svc.cluster.local`,
    },
    [ep("10.0.9.2", 8080, "http")],
  );
  for (const v of [...bookinfoViews(), gwService]) {
    for (const s of v.services) await store.put(keys.service(s.namespace, s.hostname, s.clusterId), s);
    if (v.shards) await store.put(keys.shards(v.namespace, v.hostname), v.shards);
  }
  await store.put(
    keys.config("Gateway", GW_NS, "public", "Kubernetes"),
    config("Gateway", "public", GW_NS, {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["bookinfo.example.com"] }],
    }),
  );
  await store.put(
    keys.config("VirtualService", "default", "bookinfo", "Kubernetes"),
    config("VirtualService", "bookinfo", "default", {
      hosts: ["bookinfo.example.com"],
      gateways: [`${GW_NS}/public`],
      http: [{ route: [{ destination: { host: "productpage" } }] }],
    }),
  );
  return store;
}

async function snapshots() {
  const sidecars = createSidecarSnapshots({ store: await gatewayStore(), cache: true });
  return createGatewaySnapshots({ sidecars });
}

async function read(
  s: GatewaySnapshots,
  n: ReturnType<typeof node>,
  typeUrl: string,
): Promise<readonly StoredResource[]> {
  const b = s.bind(n, GW_NS);
  if (!b) throw new Error(`${n.id}: not bound as a gateway`);
  const rs = await s.resources(b, typeUrl);
  assertEnvoyValid(
    rs.map((r) => ({ typeUrl: r.typeUrl, name: r.name, value: r.body })),
    "gateway snapshot",
  );
  return rs;
}
const names = (rs: readonly StoredResource[]) => rs.map((r) => r.name);
const push = (changes: ResourceChange[] | undefined): Push => ({ version: 1, ...(changes && { changes }) });

describe("gateway snapshots", () => {
  it("bind: a router~ node whose GENERATOR is not grpc; never a sidecar~ node or a proxyless one", async () => {
    const s = await snapshots();
    expect(s.bind(node("10.0.9.1", "gw-a"), GW_NS)).toBeDefined();
    expect(s.bind(node("10.0.9.1", "gw-a", {}, "sidecar"), GW_NS)).toBeUndefined();
    expect(s.bind({ ...node("10.0.9.1", "gw-a"), metadata: { GENERATOR: "grpc" } }, GW_NS)).toBeUndefined();
  });

  it("replicas share one class; a proxy no Gateway selects gets clusters only", async () => {
    const s = await snapshots();
    const a = await read(s, node("10.0.9.1", "gw-a"), LDS);
    const b = await read(s, node("10.0.9.3", "gw-b"), LDS);
    expect(names(a)).toEqual(["0.0.0.0_80"]);
    expect(b).toEqual(a);
    expect(s.size).toBe(1);
    const other = node("10.0.9.4", "egress", { istio: "egressgateway" });
    expect(await read(s, other, LDS)).toEqual([]);
    expect(names(await read(s, other, CDS))).toContain("BlackHoleCluster");
    expect(s.size).toBe(2);
    expect(names(await read(s, node("10.0.9.1", "gw-a"), RDS))).toEqual(["http.80"]);
  });

  it("the gateway's own instance translates the port: Service port 80 ▶ listener and route on 8080", async () => {
    const s = await snapshots();
    expect(names(await read(s, node("10.0.9.2", "gw-c"), LDS))).toEqual(["0.0.0.0_8080"]);
    expect(names(await read(s, node("10.0.9.2", "gw-c"), RDS))).toEqual(["http.8080"]);
  });

  it("the Gateway API's Gateways and routes (the push context's translation) are read beside the stored ones", async () => {
    const store = await gatewayStore();
    const api = (
      kind: "GatewayClass" | "KubernetesGateway" | "HTTPRoute",
      name: string,
      ns: string,
      spec: unknown,
    ) =>
      store.put(keys.config(kind, ns, name, "Kubernetes"), {
        kind,
        name,
        namespace: ns,
        clusterId: "Kubernetes",
        resourceVersion: "1",
        generation: 1,
        labels: {},
        spec,
      });
    await api("GatewayClass", "istio", "", { controllerName: "istio.io/gateway-controller" });
    // Manual deployment: the Gateway names the Service of a gateway the user deployed.
    await api("KubernetesGateway", "edge", GW_NS, {
      gatewayClassName: "istio",
      addresses: [{ type: "Hostname", value: `istio-ingressgateway.${GW_NS}.svc.cluster.local` }],
      listeners: [{ name: "http", port: 8081, protocol: "HTTP" }],
    });
    await api("HTTPRoute", "api", GW_NS, {
      parentRefs: [{ name: "edge" }],
      hostnames: ["api.example.com"],
      rules: [{ backendRefs: [{ name: "details", namespace: "default", port: 9080 }] }],
    });
    const s = createGatewaySnapshots({ sidecars: createSidecarSnapshots({ store, cache: true }) });
    // The proxy behind that Service (an instance of it) gets both Gateways: the Istio one by its
    // labels (port 80 translated to the instance's 8080), the translated one by its Service.
    const behind = node("10.0.9.2", "gw-c");
    expect(names(await read(s, behind, LDS))).toEqual(["0.0.0.0_8080", "0.0.0.0_8081"]);
    expect(names(await read(s, behind, RDS))).toEqual(["http.8080", "http.8081"]);
    // A proxy with the same labels but no instance of the Service gets the Istio Gateway only.
    const other = node("10.0.9.1", "gw-a", {
      istio: "ingressgateway",
      "gateway.networking.k8s.io/gateway-name": "edge",
    });
    expect(names(await read(s, other, LDS))).toEqual(["0.0.0.0_80"]);
  });

  it("a server whose protocol conflicts with its port's first is left out and logged (the first wins)", async () => {
    const store = await gatewayStore();
    await store.put(
      keys.config("Gateway", GW_NS, "tcp", "Kubernetes"),
      config("Gateway", "tcp", GW_NS, {
        selector: { istio: "ingressgateway" },
        servers: [{ port: { number: 80, name: "tcp", protocol: "TCP" }, hosts: ["*"] }],
      }),
    );
    const lines: string[] = [];
    const s = createGatewaySnapshots({
      sidecars: createSidecarSnapshots({ store, cache: true }),
      log: (l) => lines.push(l),
    });
    expect(names(await read(s, node("10.0.9.1", "gw-a"), RDS))).toEqual(["http.80"]);
    expect(lines).toEqual([
      "skipping server on gateway istio-system/tcp port tcp.80.TCP: conflict with existing server 80.HTTP",
    ]);
  });

  it("an endpoint-only push keeps the classes; any other push drops them and re-reads", async () => {
    const s = await snapshots();
    const n = node("10.0.9.1", "gw-a");
    const b = s.bind(n, GW_NS);
    if (!b) throw new Error("not bound");
    await s.resources(b, LDS);
    const eds: ResourceChange = {
      typeUrl: EDS,
      name: "outbound|9080||details.default.svc.cluster.local",
      version: "v2",
      service: "default/details.default.svc.cluster.local",
    };
    s.publish(push([eds]));
    expect(s.size).toBe(1);
    expect(s.staleFor(b)).toBe(false);
    expect(await s.changedBy(b, push([eds]))).toBe(false);
    s.publish(push(undefined));
    expect(s.size).toBe(0);
    expect(s.staleFor(b)).toBe(true);
    await s.resources(b, LDS);
    expect(s.staleFor(b)).toBe(false);
  });
});
