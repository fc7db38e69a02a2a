/**
 * The Gateway API ingest handlers called with an IngestContext, as ingest dispatch calls them:
 * stored as StoredConfig with generation; an unchanged spec pushes nothing; a route change is a Full
 * push naming the route and its Service parents old ∪ new; a Gateway, GatewayClass or
 * ReferenceGrant change names every Service a stored mesh route names; a delete pushes the same way.
 */
import { describe, expect, it } from "vitest";
import { defaultRegistryOptions, type IngestContext, type Outcome } from "../../../lib/ingest/context.ts";
import type { KubeObject } from "../../../lib/ingest/events.ts";
import { gatewayApiHandlers } from "../../../lib/ingest/kinds/gateway-api.ts";
import type { StoredConfig } from "../../../lib/registry/istio/stored.ts";
import { keys } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

function context(): IngestContext {
  return {
    store: createMemoryStore(),
    now: () => 1_700_000_000_000,
    registry: defaultRegistryOptions,
    cluster: "east",
    shard: { provider: "Kubernetes", cluster: "east" },
  };
}

const route = (name: string, services: string[], generation = 1, backend = "echo"): KubeObject =>
  ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, namespace: "default", resourceVersion: String(generation), generation },
    spec: {
      parentRefs: services.map((s) => ({ group: "", kind: "Service", name: s })),
      rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
    },
  }) as unknown as KubeObject;

const configs = (o: Outcome) => (o.kind === "applied" ? o.push?.configsUpdated : undefined);
const svc = (name: string) => `ServiceEntry/default/${name}.default.svc.cluster.local`;

describe("Gateway API ingest handlers", () => {
  it("stores a route with its generation and pushes for its Service parents, old ∪ new", async () => {
    const ctx = context();
    const h = gatewayApiHandlers.HTTPRoute;
    const added = await h.apply(ctx, route("r", ["a"]), undefined);
    expect(added.kind === "applied" && added.push?.full).toBe(true);
    expect(configs(added)).toEqual(["HTTPRoute/default/r", svc("a")]);
    const stored = await ctx.store.get<StoredConfig<"HTTPRoute">>(
      keys.config("HTTPRoute", "default", "r", "east"),
    );
    expect(stored?.value).toMatchObject({
      kind: "HTTPRoute",
      name: "r",
      namespace: "default",
      generation: 1,
    });

    expect(await h.apply(ctx, route("r", ["a"]), undefined)).toEqual({ kind: "unchanged" });
    const moved = await h.apply(ctx, route("r", ["b"], 2), undefined);
    expect(configs(moved)).toEqual(["HTTPRoute/default/r", svc("a"), svc("b")]);

    const removed = await h.remove(ctx, { namespace: "default", name: "r" }, undefined);
    expect(configs(removed)).toEqual(["HTTPRoute/default/r", svc("b")]);
    expect(await ctx.store.get(keys.config("HTTPRoute", "default", "r", "east"))).toBeUndefined();
    expect(await h.remove(ctx, { namespace: "default", name: "r" }, undefined)).toEqual({
      kind: "unchanged",
    });
  });

  it("a new generation with the same spec is stored without a push", async () => {
    const ctx = context();
    const h = gatewayApiHandlers.GRPCRoute;
    await h.apply(ctx, route("r", ["a"]), undefined);
    expect(await h.apply(ctx, route("r", ["a"], 3), undefined)).toEqual({ kind: "unchanged" });
    const stored = await ctx.store.get<StoredConfig<"GRPCRoute">>(
      keys.config("GRPCRoute", "default", "r", "east"),
    );
    expect(stored?.value.generation).toBe(3);
  });

  it("a Gateway, GatewayClass or ReferenceGrant change names every Service a mesh route names", async () => {
    const ctx = context();
    await gatewayApiHandlers.HTTPRoute.apply(ctx, route("r1", ["a"]), undefined);
    await gatewayApiHandlers.GRPCRoute.apply(ctx, route("r2", ["b", "a"]), undefined);
    const gw = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gw", namespace: "default", resourceVersion: "1", generation: 1 },
      spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    } as unknown as KubeObject;
    const out = await gatewayApiHandlers.KubernetesGateway.apply(ctx, gw, undefined);
    expect(configs(out)).toEqual(["KubernetesGateway/default/gw", svc("a"), svc("b")]);
    const grant = {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "g", namespace: "default", resourceVersion: "1", generation: 1 },
      spec: { from: [], to: [] },
    } as unknown as KubeObject;
    expect(configs(await gatewayApiHandlers.ReferenceGrant.apply(ctx, grant, undefined))).toEqual([
      "ReferenceGrant/default/g",
      svc("a"),
      svc("b"),
    ]);
  });
});
