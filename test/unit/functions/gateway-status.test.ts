/**
 * GET /v1/gateway-status (functions/gateway-status.ts) on the ingest app, over a real memory store
 * fed through POST /v1/events: the ingest token guards it, the cluster is checked, the body is the
 * injected function's statuses in a stable order, and its ETag answers 304 until the store changes.
 * The status function here stands in for the gateway translation: one status per stored
 * VirtualService of the cluster, so what the store holds decides the answer.
 */
import { describe, expect, it } from "vitest";
import { type GatewayStatuses, gatewayStatusOver } from "../../../functions/gateway-status.ts";
import { createIngestApp } from "../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import type { StoredConfig } from "../../../lib/registry/istio/stored.ts";
import { keys, listAll } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

const fromStore: GatewayStatuses = async (store, { cluster }) =>
  (await listAll<StoredConfig>(store, keys.configPrefix("VirtualService")))
    .filter((e) => e.value.clusterId === cluster)
    .map(
      (e): GatewayApiStatus => ({
        group: "gateway.networking.k8s.io",
        version: "v1",
        resource: "httproutes",
        kind: "HTTPRoute",
        namespace: e.value.namespace,
        name: e.value.name,
        status: { parents: [{ hosts: (e.value.spec as { hosts?: string[] }).hosts ?? [] }] },
      }),
    );

function setup(token: string | undefined = "t") {
  const store = createMemoryStore();
  const calls: string[] = [];
  const app = createIngestApp({
    store,
    registry: defaultRegistryOptions,
    now: () => 1_700_000_000_000,
    token,
    clusterId: "Kubernetes",
    allowUnauthenticated: () => false,
    log: () => undefined,
    gatewayStatus: {
      store,
      statuses: (s, o) => {
        calls.push(o.cluster);
        return fromStore(s, o);
      },
    },
  });
  const auth = { authorization: "Bearer t" };
  const get = (query = "?cluster=east", headers: Record<string, string> = auth) =>
    app.request(`/v1/gateway-status${query}`, { headers });
  let rv = 10;
  const vs = (name: string, host: string, type = "ADDED", status?: unknown) =>
    app.request("/v1/events?cluster=east", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        type,
        object: {
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          metadata: { name, namespace: "default", resourceVersion: String(++rv), generation: 1 },
          spec: { hosts: [host], http: [{ route: [{ destination: { host } }] }] },
          ...(status !== undefined && { status }),
        },
      }),
    });
  return { app, get, vs, calls };
}

describe("GET /v1/gateway-status", () => {
  it("answers the cluster's statuses, sorted, with an ETag; 304 to If-None-Match until the store changes", async () => {
    const h = setup();
    const empty = await h.get();
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual({ statuses: [] });
    const emptyTag = empty.headers.get("etag");
    expect(emptyTag).toMatch(/^"[0-9a-f]{16}"$/);

    expect((await h.vs("b-route", "b.default.svc.cluster.local")).status).toBe(200);
    expect((await h.vs("a-route", "a.default.svc.cluster.local")).status).toBe(200);
    const full = await h.get("?cluster=east", { authorization: "Bearer t", "if-none-match": emptyTag ?? "" });
    expect(full.status).toBe(200);
    const body = (await full.json()) as { statuses: GatewayApiStatus[] };
    expect(body.statuses.map((s) => s.name)).toEqual(["a-route", "b-route"]);
    expect(body.statuses[0]?.status).toEqual({ parents: [{ hosts: ["a.default.svc.cluster.local"] }] });
    const tag = full.headers.get("etag") ?? "";
    expect(tag).not.toBe(emptyTag);

    for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, "*"]) {
      const same = await h.get("?cluster=east", { authorization: "Bearer t", "if-none-match": ifNoneMatch });
      expect(same.status).toBe(304);
      expect(same.headers.get("etag")).toBe(tag);
      expect(await same.text()).toBe("");
    }
    // Another cluster holds none of them.
    expect(await (await h.get("?cluster=west")).json()).toEqual({ statuses: [] });
    expect(h.calls).toEqual(["east", "east", "east", "east", "east", "east", "west"]);
  });

  it("a status write's MODIFIED event (only status and resourceVersion changed) pushes nothing and keeps the ETag", async () => {
    const h = setup();
    await h.vs("a-route", "a.default.svc.cluster.local");
    const tag = (await h.get()).headers.get("etag") ?? "";
    const modified = await h.vs("a-route", "a.default.svc.cluster.local", "MODIFIED", {
      conditions: [{ type: "Accepted", status: "True" }],
    });
    const summary = (await modified.json()) as { applied: number; unchanged: number; push?: unknown };
    expect(summary).toMatchObject({ applied: 0, unchanged: 1 });
    expect(summary.push ?? null).toBeNull();
    const again = await h.get("?cluster=east", { authorization: "Bearer t", "if-none-match": tag });
    expect(again.status).toBe(304);
  });

  it("the cluster defaults to CLUSTER_ID; a bad one is 400 and the statuses are not computed", async () => {
    const h = setup();
    expect((await h.get("")).status).toBe(200);
    const bad = await h.get("?cluster=a%2Fb");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('cluster "a/b"');
    expect(h.calls).toEqual(["Kubernetes"]);
  });

  it("the ingest token guards it: 401 without or with a wrong one, nothing computed", async () => {
    const h = setup();
    expect((await h.get("?cluster=east", {})).status).toBe(401);
    expect((await h.get("?cluster=east", { authorization: "Bearer u" })).status).toBe(401);
    expect(h.calls).toEqual([]);
  });

  it("is not served when no status function is bound", async () => {
    const app = createIngestApp({
      store: createMemoryStore(),
      registry: defaultRegistryOptions,
      now: () => 0,
      token: "t",
      clusterId: "Kubernetes",
      allowUnauthenticated: () => false,
      log: () => undefined,
    });
    const res = await app.request("/v1/gateway-status", { headers: { authorization: "Bearer t" } });
    expect(res.status).toBe(404);
  });

  it("gatewayStatusOver: the hosts' statuses are the Gateway API translation's over their store", async () => {
    const store = createMemoryStore();
    const gatewayClass: StoredConfig<"GatewayClass"> = {
      kind: "GatewayClass",
      name: "istio",
      namespace: "",
      clusterId: "Kubernetes",
      resourceVersion: "1",
      generation: 2,
      labels: {},
      spec: { controllerName: "istio.io/gateway-controller" },
    };
    await store.put(keys.config("GatewayClass", "", "istio", "Kubernetes"), gatewayClass);
    const app = createIngestApp({
      store,
      registry: defaultRegistryOptions,
      now: () => 0,
      token: "t",
      clusterId: "Kubernetes",
      allowUnauthenticated: () => false,
      log: () => undefined,
      ...gatewayStatusOver(store, "cluster.local"),
    });
    const res = await app.request("/v1/gateway-status", { headers: { authorization: "Bearer t" } });
    expect(res.status).toBe(200);
    const { statuses } = (await res.json()) as { statuses: GatewayApiStatus[] };
    expect(statuses).toMatchObject([
      {
        group: "gateway.networking.k8s.io",
        resource: "gatewayclasses",
        kind: "GatewayClass",
        name: "istio",
        generation: 2,
        status: { conditions: [{ type: "Accepted", status: "True", observedGeneration: 2 }] },
      },
    ]);
  });
});
