/**
 * Gateway API routes through a real flush (memory store, manual clock): StoredConfigs written as
 * ingest stores them, then the debounce turn. A GRPCRoute whose parent is a Service (a GAMMA
 * producer route) splits 90/10 and matches a header in the proxyless RouteConfiguration of that
 * Service; a consumer route reaches only its own namespace's view; a Gateway-attached route to
 * another namespace's backend without a ReferenceGrant is refused (ResolvedRefs False) and routes
 * nowhere there, until a ReferenceGrant allows it. A route added, changed and removed after the
 * first push reaches the published routes through the push its ingest handler returns.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import type { KubeObject } from "../../../lib/ingest/events.ts";
import { gatewayApiHandlers } from "../../../lib/ingest/kinds/gateway-api.ts";
import { enqueuePush } from "../../../lib/push/queue.ts";
import { loadGatewayApi } from "../../../lib/registry/gateway-api/index.ts";
import type { IstioKind } from "../../../lib/registry/istio/common.ts";
import type { StoredConfig } from "../../../lib/registry/istio/stored.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";

const port = { name: "grpc", port: 9080 };
const suffix = "cluster.local";
const echo = `echo.default.svc.${suffix}`;
const v1 = `outbound|9080||echo-v1.default.svc.${suffix}`;
const v2 = `outbound|9080||echo-v2.default.svc.${suffix}`;

/** echo (the Service routes name), echo-v1 and echo-v2 (one pod each) in default; backend in other. */
async function mesh() {
  const h = createHarness();
  const events: unknown[] = [];
  for (const [name, ns, ip] of [
    ["echo", "default", "10.0.0.1"],
    ["echo-v1", "default", "10.0.0.2"],
    ["echo-v2", "default", "10.0.0.3"],
    ["backend", "other", "10.0.1.1"],
  ] as const)
    events.push(
      ev("ADDED", service(name, ns, [port])),
      ev("ADDED", pod(name, ns, ip)),
      ev("ADDED", endpointSlice(`${name}-1`, name, ns, port, [{ ip, ready: true }])),
    );
  await h.ingest(...events);
  return h;
}

function put(h: ReturnType<typeof createHarness>, kind: IstioKind, ns: string, name: string, spec: unknown) {
  const c: StoredConfig<IstioKind> = {
    kind,
    name,
    namespace: ns,
    clusterId: "east",
    resourceVersion: "1",
    labels: {},
    spec,
    generation: 1,
    creationTimestamp: "2026-01-01T00:00:00Z",
  };
  return h.store.put(keys.config(kind, ns, name, "east"), c);
}

const splitRoute = () => ({
  parentRefs: [{ group: "", kind: "Service", name: "echo", namespace: "default" }],
  rules: [
    {
      matches: [{ headers: [{ name: "x-canary", value: "yes" }] }],
      backendRefs: [{ name: "echo-v2", namespace: "default", port: 9080 }],
    },
    {
      backendRefs: [
        { name: "echo-v1", namespace: "default", port: 9080, weight: 90 },
        { name: "echo-v2", namespace: "default", port: 9080, weight: 10 },
      ],
    },
  ],
});

/** The routes of a RouteConfiguration: its header matches and where it sends. */
function routes(stored: StoredResource | undefined) {
  if (!stored) return undefined;
  const rc = fromBinary(RouteConfigurationSchema, stored.body);
  return rc.virtualHosts[0]?.routes.map((r) => {
    const headers = r.match?.headers.map((m) => m.name) ?? [];
    if (r.action.case !== "route") return { headers, to: "no route" };
    const spec = r.action.value.clusterSpecifier;
    const to =
      spec.case === "cluster"
        ? spec.value
        : spec.case === "weightedClusters"
          ? spec.value.clusters.map((c) => `${c.name}=${c.weight}`).join(",")
          : "?";
    return { headers, to };
  });
}

const shared = async (h: ReturnType<typeof createHarness>) =>
  routes((await h.store.get<StoredResource>(keys.resource(TypeUrl.route, `${echo}:9080`)))?.value);
const inView = async (h: ReturnType<typeof createHarness>, view: string) =>
  routes((await h.store.get<StoredResource>(keys.viewResource(view, TypeUrl.route, `${echo}:9080`)))?.value);

describe("Gateway API routes, stored to published", () => {
  it("a producer GRPCRoute with a Service parent splits 90/10 and matches a header for every client", async () => {
    const h = await mesh();
    await put(h, "GRPCRoute", "default", "split", splitRoute());
    await h.settle();
    expect(await shared(h)).toEqual([
      { headers: ["x-canary"], to: v2 },
      { headers: [], to: `${v1}=90,${v2}=10` },
    ]);
    expect(h.lines).toEqual([]);
  });

  it("a consumer route applies to its own namespace's clients only", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", { apiVersion: "v1", kind: "Namespace", metadata: { name: "client" } }));
    await put(h, "GRPCRoute", "client", "split", splitRoute());
    await h.settle();
    // Every other namespace keeps the Service's own route.
    expect(await shared(h)).toEqual([{ headers: [], to: `outbound|9080||${echo}` }]);
    expect(await inView(h, "client")).toEqual([
      { headers: ["x-canary"], to: v2 },
      { headers: [], to: `${v1}=90,${v2}=10` },
    ]);
    expect(await inView(h, "default")).toBeUndefined();
  });

  it("a consumer route wins over the producer route for its namespace's clients only", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", { apiVersion: "v1", kind: "Namespace", metadata: { name: "client" } }));
    await put(h, "GRPCRoute", "default", "producer", {
      parentRefs: [{ group: "", kind: "Service", name: "echo" }],
      rules: [{ backendRefs: [{ name: "echo-v1", port: 9080 }] }],
    });
    await put(h, "GRPCRoute", "client", "consumer", {
      parentRefs: [{ group: "", kind: "Service", name: "echo", namespace: "default" }],
      rules: [{ backendRefs: [{ name: "echo-v2", namespace: "default", port: 9080 }] }],
    });
    await h.settle();
    expect(await shared(h)).toEqual([{ headers: [], to: v1 }]);
    expect(await inView(h, "client")).toEqual([{ headers: [], to: v2 }]);
  });

  it("a route added, changed and removed later: the push its handler returns reaches the published routes", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", { apiVersion: "v1", kind: "Namespace", metadata: { name: "client" } }));
    await h.settle();
    const ctx = {
      store: h.store,
      now: () => 1_700_000_000_000,
      registry: defaultRegistryOptions,
      cluster: "east",
      shard: { provider: "Kubernetes" as const, cluster: "east" },
    };
    const apply = async (ns: string, spec: unknown, generation: number) => {
      const obj = {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "GRPCRoute",
        metadata: { name: "split", namespace: ns, resourceVersion: String(generation), generation },
        spec,
      } as unknown as KubeObject;
      const out = await gatewayApiHandlers.GRPCRoute.apply(ctx, obj, undefined);
      if (out.kind === "applied" && out.push) await enqueuePush(h.store, out.push, ctx.now());
      await h.settle();
    };
    await apply("client", splitRoute(), 1);
    expect(await shared(h)).toEqual([{ headers: [], to: `outbound|9080||${echo}` }]);
    expect(await inView(h, "client")).toEqual([
      { headers: ["x-canary"], to: v2 },
      { headers: [], to: `${v1}=90,${v2}=10` },
    ]);
    const simpler = {
      ...splitRoute(),
      rules: [{ backendRefs: [{ name: "echo-v1", namespace: "default", port: 9080 }] }],
    };
    await apply("client", simpler, 2);
    expect(await inView(h, "client")).toEqual([{ headers: [], to: v1 }]);
    const removed = await gatewayApiHandlers.GRPCRoute.remove(
      ctx,
      { namespace: "client", name: "split" },
      undefined,
    );
    if (removed.kind === "applied" && removed.push) await enqueuePush(h.store, removed.push, ctx.now());
    await h.settle();
    expect(await inView(h, "client")).toBeUndefined();
    expect(await shared(h)).toEqual([{ headers: [], to: `outbound|9080||${echo}` }]);
  });

  it("a Gateway-attached route to another namespace's backend needs a ReferenceGrant", async () => {
    const h = await mesh();
    await put(h, "GatewayClass", "", "istio", { controllerName: "istio.io/gateway-controller" });
    await put(h, "KubernetesGateway", "default", "gw", {
      gatewayClassName: "istio",
      listeners: [{ name: "grpc", port: 80, protocol: "HTTP", hostname: "echo.example.com" }],
    });
    await put(h, "GRPCRoute", "default", "cross", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["echo.example.com"],
      rules: [{ backendRefs: [{ name: "backend", namespace: "other", port: 9080 }] }],
    });
    const refused = await loadGatewayApi(h.store, { domainSuffix: suffix });
    const status = refused.statuses.find((s) => s.kind === "GRPCRoute")?.status as {
      parents: { conditions: { type: string; status: string; reason: string; message: string }[] }[];
    };
    expect(status.parents[0]?.conditions).toContainEqual({
      type: "ResolvedRefs",
      status: "False",
      reason: "RefNotPermitted",
      message: `backendRef backend/other not accessible to a GRPCRoute in namespace "default" (missing a ReferenceGrant?)`,
      observedGeneration: 1,
    });
    const vs = refused.virtualServices.find(
      (v) => v.spec && JSON.stringify(v.spec).includes("echo.example.com"),
    );
    expect(JSON.stringify(vs?.spec)).not.toContain("backend.other");
    expect(vs?.spec).toMatchObject({ gateways: ["default/gw~istio-autogenerated-k8s-gateway~grpc"] });

    await put(h, "ReferenceGrant", "other", "allow", {
      from: [{ group: "gateway.networking.k8s.io", kind: "GRPCRoute", namespace: "default" }],
      to: [{ group: "", kind: "Service" }],
    });
    const granted = await loadGatewayApi(h.store, { domainSuffix: suffix });
    const after = granted.statuses.find((s) => s.kind === "GRPCRoute")?.status as typeof status;
    expect(after.parents[0]?.conditions.find((c) => c.type === "ResolvedRefs")?.status).toBe("True");
    expect(JSON.stringify(granted.virtualServices)).toContain(`backend.other.svc.${suffix}`);
    // The mesh's own routing is untouched by a Gateway-bound route.
    await h.settle();
    expect(await shared(h)).toEqual([{ headers: [], to: `outbound|9080||${echo}` }]);
  });
});
