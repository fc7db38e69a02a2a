/**
 * The Gateway API through the real Node runtime, observed through calls of real proxyless gRPC
 * clients (grpc-js-xds, one xDS client and node per channel) to real gRPC backends on 127.0.0.x,
 * through a raw Delta ADS client posing as a gateway proxy, and through GET /v1/gateway-status:
 * - a GRPCRoute whose parent is the Service `reviews` (a producer route) splits calls 90/10
 *   between two versions and sends `x-user: jason` to v2;
 * - a consumer route (in another namespace) routes that namespace's clients only;
 * - an HTTPRoute does the same for the gRPC service, by method path;
 * - a Gateway-attached HTTPRoute to another namespace's backend without a ReferenceGrant is
 *   refused (ResolvedRefs False, RefNotPermitted; the gateway's route names no such cluster, the
 *   mesh's calls keep their route) until a ReferenceGrant allows it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { openDelta } from "../delta/delta-client.ts";
import { holder, subscribeAll } from "../sidecar/delta-holder.ts";
import { type Backend, startBackend } from "../support/backends.ts";
import { post, until } from "../support/converge.ts";
import { endpointSlice, event, pod, podName, service, versionedPod } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { registerXdsPerChannel, type WhoClient, whoClient, xdsBootstrap } from "../support/xds-client.ts";

const ns = "default";
const target = "xds:///reviews.default.svc.cluster.local:9080";
const jason = { "x-user": "jason" };
const gwApi = "gateway.networking.k8s.io/v1";
const node = (namespace: string) => `sidecar~127.0.0.9~client.${namespace}~${namespace}.svc.cluster.local`;
let rv = 1000;
const meta = (name: string, namespace: string) => ({
  name,
  namespace,
  resourceVersion: String(++rv),
  generation: 1,
  uid: `uid-${namespace}-${name}`,
});

let cp: RunningControlPlane;
let backends: Backend[] = [];
const clients: WhoClient[] = [];
const streams: { close(): void }[] = [];
const clientIn = (namespace: string) => {
  const c = whoClient(target, xdsBootstrap(cp.xdsPort, node(namespace)));
  clients.push(c);
  return c;
};

/** A slice of `serviceName` whose endpoints are the `reviews` pods at `ips`. */
const sliceOf = (serviceName: string, port: number, ips: string[]) => {
  const s = endpointSlice(
    `${serviceName}-1`,
    serviceName,
    ns,
    { name: "grpc", port },
    ips.map((ip) => ({ ip, ready: true })),
  );
  for (const e of s.endpoints) e.targetRef.name = podName("reviews", e.addresses[0] as string);
  return s;
};

const reviewsParent = { group: "", kind: "Service", name: "reviews", namespace: ns, port: 9080 };
const backend = (name: string, weight?: number) => ({
  name,
  namespace: ns,
  port: 9080,
  ...(weight !== undefined && { weight }),
});
const meshRoute = (kind: "GRPCRoute" | "HTTPRoute", name: string, namespace: string, rules: unknown[]) => ({
  apiVersion: gwApi,
  kind,
  metadata: meta(name, namespace),
  spec: { parentRefs: [reviewsParent], rules },
});

/** x-user: jason ▶ v2; the rest 90/10 between v1 and v2. */
const producerRules = [
  { matches: [{ headers: [{ name: "x-user", value: "jason" }] }], backendRefs: [backend("reviews-v2")] },
  { backendRefs: [backend("reviews-v1", 90), backend("reviews-v2", 10)] },
];

/** The answers of `n` calls, counted. */
async function tally(client: WhoClient, n: number, headers?: Record<string, string>) {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const a = await client.who(1000, headers);
    out[a] = (out[a] ?? 0) + 1;
  }
  return out;
}

/** Applies what `h`'s stream receives until `done` holds (at most 10 s). */
async function takeUntil(h: ReturnType<typeof holder>, done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done(); await h.take())
    if (Date.now() > deadline) {
      throw new Error(`the gateway never received ${what}\n${cp.output().slice(-6000)}`);
    }
}

/** The statuses the control plane computed, as the relay reads them. */
async function statuses(): Promise<GatewayApiStatus[]> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/v1/gateway-status`, {
    headers: { authorization: `Bearer ${cp.token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { statuses: GatewayApiStatus[] }).statuses;
}

/** The conditions of `route`'s first parent, by type: `status/reason`. */
async function parentConditions(kind: string, namespace: string, name: string) {
  const s = (await statuses()).find((x) => x.kind === kind && x.namespace === namespace && x.name === name);
  const parents = (s?.status.parents ?? []) as {
    conditions: { type: string; status: string; reason: string }[];
  }[];
  return Object.fromEntries((parents[0]?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
}

beforeAll(async () => {
  registerXdsPerChannel();
  const port = await freePort();
  backends = [await startBackend("a", "127.0.0.1", port), await startBackend("b", "127.0.0.2", port)];
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  const svc = (name: string) => event("ADDED", service(name, ns, [{ name: "grpc", port: 9080 }]));
  await post(
    cp,
    event("ADDED", versionedPod("reviews", ns, "127.0.0.1", "v1")),
    event("ADDED", versionedPod("reviews", ns, "127.0.0.2", "v2")),
    svc("reviews"),
    svc("reviews-v1"),
    svc("reviews-v2"),
    event("ADDED", sliceOf("reviews", port, ["127.0.0.1", "127.0.0.2"])),
    event("ADDED", sliceOf("reviews-v1", port, ["127.0.0.1"])),
    event("ADDED", sliceOf("reviews-v2", port, ["127.0.0.2"])),
  );
});

afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of streams) s.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("mesh routes (GAMMA) for proxyless gRPC clients", () => {
  it("a GRPCRoute on the Service splits calls 90/10 and sends x-user: jason to v2", async () => {
    const client = clientIn(ns);
    await until(cp, client, Date.now(), { accept: (a) => a === "a" || a === "b", what: "the Service" });
    const at = await post(cp, event("ADDED", meshRoute("GRPCRoute", "reviews", ns, producerRules)));
    await until(cp, client, at, {
      accept: (a) => a === "b",
      what: "v2 for jason",
      settle: 10,
      headers: jason,
    });
    const counts = await tally(client, 300);
    // Binomial(300, 0.9): both bounds are over six standard deviations from the mean.
    expect(counts.a).toBeGreaterThan(240);
    expect(counts.a).toBeLessThan(295);
    expect((counts.a ?? 0) + (counts.b ?? 0)).toBe(300);
    for (let i = 0; i < 20; i++) expect(await client.who(1000, jason)).toBe("b");
    expect(await parentConditions("GRPCRoute", ns, "reviews")).toEqual({
      Accepted: "True/Accepted",
      ResolvedRefs: "True/ResolvedRefs",
    });
  });

  it("a consumer route routes its own namespace's clients only", async () => {
    const shop = clientIn("shop");
    const other = clientIn("other");
    const at = await post(
      cp,
      event(
        "ADDED",
        meshRoute("GRPCRoute", "reviews-v1-only", "shop", [{ backendRefs: [backend("reviews-v1")] }]),
      ),
    );
    await until(cp, shop, at, {
      accept: (a) => a === "a",
      what: "v1 for shop, even for jason",
      settle: 20,
      headers: jason,
    });
    // Another namespace's client still takes the producer route.
    await until(cp, other, at, {
      accept: (a) => a === "b",
      what: "the producer route for jason",
      settle: 10,
      headers: jason,
    });
    expect(Object.keys(await tally(shop, 40))).toEqual(["a"]);
  });

  it("an HTTPRoute routes a gRPC service by method path; deleting the routes restores the Service", async () => {
    const client = clientIn(ns);
    const http = meshRoute("HTTPRoute", "reviews-http", ns, [
      {
        matches: [{ path: { type: "PathPrefix", value: "/edgepilot.e2e.Who/" } }],
        backendRefs: [backend("reviews-v2")],
      },
    ]);
    const grpc = meshRoute("GRPCRoute", "reviews", ns, producerRules);
    // The GRPCRoute goes first: one route per Service and port wins (the HTTPRoute alone then).
    let at = await post(cp, event("DELETED", grpc), event("ADDED", http));
    await until(cp, client, at, { accept: (a) => a === "b", what: "v2 by method path", settle: 20 });
    // A delete carries a newer resourceVersion, as the API server sends it.
    at = await post(cp, event("DELETED", { ...http, metadata: meta("reviews-http", ns) }));
    await until(cp, client, at, { accept: (a) => a === "a", what: "v1 through the Service", settle: 1 });
    await until(cp, client, at, { accept: (a) => a === "b", what: "v2 through the Service", settle: 1 });
  });
});

describe("a Gateway-attached route to another namespace's backend", () => {
  const routerNode = {
    id: "router~10.1.9.2~edge-istio-5d8f7c-abcde.ingress~ingress.svc.cluster.local",
    metadata: {
      LABELS: { "gateway.networking.k8s.io/gateway-name": "edge", app: "edge-istio" },
      NAMESPACE: "ingress",
      CLUSTER_ID: "Kubernetes",
    },
  };
  /** The clusters the gateway's `http.80` routes to. */
  const routedClusters = (routes: Map<string, RouteConfiguration>) =>
    (routes.get("http.80")?.virtualHosts ?? []).flatMap((vh) =>
      vh.routes.flatMap((r) => {
        if (r.action.case !== "route") return [];
        const c = r.action.value.clusterSpecifier;
        if (c.case === "cluster") return [c.value];
        if (c.case === "weightedClusters") return c.value.clusters.map((w) => w.name);
        return [];
      }),
    );

  it("is refused without a ReferenceGrant (ResolvedRefs False), and routed once one allows it", async () => {
    const mesh = clientIn("ingress");
    // The gateway proxy the user deployed, behind the Service istiod names for the Gateway
    // (<name>-<class>): its instance of that Service binds it to the Gateway.
    const gatewaySlice = endpointSlice("edge-istio-1", "edge-istio", "ingress", { name: "http", port: 80 }, [
      { ip: "10.1.9.2", ready: true },
    ]);
    await post(
      cp,
      event("ADDED", pod("edge-istio", "ingress", "10.1.9.2")),
      event("ADDED", service("edge-istio", "ingress", [{ name: "http", port: 80 }])),
      event("ADDED", gatewaySlice),
      event("ADDED", {
        apiVersion: gwApi,
        kind: "GatewayClass",
        metadata: { name: "istio", resourceVersion: String(++rv), generation: 1 },
        spec: { controllerName: "istio.io/gateway-controller" },
      }),
      event("ADDED", {
        apiVersion: gwApi,
        kind: "Gateway",
        metadata: meta("edge", "ingress"),
        spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
      }),
      event("ADDED", {
        apiVersion: gwApi,
        kind: "HTTPRoute",
        metadata: meta("shop", "ingress"),
        spec: {
          parentRefs: [{ name: "edge" }],
          hostnames: ["shop.example.com"],
          rules: [{ backendRefs: [backend("reviews")] }],
        },
      }),
    );
    expect(await parentConditions("HTTPRoute", "ingress", "shop")).toMatchObject({
      Accepted: "True/Accepted",
      ResolvedRefs: "False/RefNotPermitted",
    });
    const g = openDelta(cp.xdsPort);
    streams.push(g);
    const h = holder(g);
    g.send({ typeUrl: TypeUrl.cluster, node: routerNode });
    g.send({ typeUrl: TypeUrl.listener });
    // The Gateway's push may land after the stream opened: its listener arrives with it.
    await takeUntil(h, () => h.names(TypeUrl.listener).length > 0, "the gateway's listener");
    await subscribeAll(g, h);
    expect(h.names(TypeUrl.listener)).toEqual(["0.0.0.0_80"]);
    expect(h.names(TypeUrl.route)).toEqual(["http.80"]);
    expect(routedClusters(h.routes())).not.toContain("outbound|9080||reviews.default.svc.cluster.local");
    // Requests for the refused backend answer 500, as the Gateway API asks.
    const shop = h
      .routes()
      .get("http.80")
      ?.virtualHosts.find((vh) => vh.domains.includes("shop.example.com"));
    expect(
      shop?.routes.map((r) => (r.action.case === "directResponse" ? r.action.value.status : r.action.case)),
    ).toEqual([500]);
    // The mesh's calls keep their route.
    await until(cp, mesh, Date.now(), { accept: (a) => a === "a" || a === "b", what: "the Service" });

    await post(
      cp,
      event("ADDED", {
        apiVersion: "gateway.networking.k8s.io/v1beta1",
        kind: "ReferenceGrant",
        metadata: meta("from-ingress", ns),
        spec: {
          from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "ingress" }],
          to: [{ group: "", kind: "Service" }],
        },
      }),
    );
    expect(await parentConditions("HTTPRoute", "ingress", "shop")).toMatchObject({
      ResolvedRefs: "True/ResolvedRefs",
    });
    await takeUntil(
      h,
      () => routedClusters(h.routes()).includes("outbound|9080||reviews.default.svc.cluster.local"),
      "the gateway's route to reviews",
    );
  });
});
