/** configz, registryz and endpointShardz over a memory store: shapes, filters, paging, bounds. */
import { describe, expect, it } from "vitest";
import { readConfigz } from "../../../lib/debug/configz.ts";
import {
  maxPageEndpoints,
  maxShardEndpoints,
  readEndpointShardz,
  shardzEndpoint,
} from "../../../lib/debug/endpoint-shardz.ts";
import { maxPageBytes } from "../../../lib/debug/page.ts";
import { readRegistryz, registryzItem } from "../../../lib/debug/registryz.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { config, endpoint, service, shards } from "./builders.ts";

const ok = <T>(r: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

describe("configz", () => {
  const store = createMemoryStore();
  const seeded = Promise.all([
    store.put(
      keys.config("DestinationRule", "default", "reviews", "east"),
      config({ clusterId: "east", labels: { app: "r" } }),
    ),
    store.put(
      keys.config("VirtualService", "default", "reviews", "east"),
      config({ kind: "VirtualService", clusterId: "east" }),
    ),
    store.put(
      keys.config("VirtualService", "prod", "ratings", "east"),
      config({ kind: "VirtualService", namespace: "prod", name: "ratings" }),
    ),
  ]);

  it.each([
    {
      name: "everything",
      q: {},
      want: [
        "DestinationRule default/reviews",
        "VirtualService default/reviews",
        "VirtualService prod/ratings",
      ],
    },
    {
      name: "one kind",
      q: { kind: "VirtualService" },
      want: ["VirtualService default/reviews", "VirtualService prod/ratings"],
    },
    {
      name: "one kind in one namespace",
      q: { kind: "VirtualService", namespace: "prod" },
      want: ["VirtualService prod/ratings"],
    },
  ])("$name", async ({ q, want }) => {
    await seeded;
    const items = ok(await readConfigz(store, { limit: 10, ...q })).items;
    expect(items.map((c) => `${c.kind} ${c.metadata.namespace}/${c.metadata.name}`)).toEqual(want);
  });

  it("shows a config as a Kubernetes object with its cluster", async () => {
    await seeded;
    const [first] = ok(await readConfigz(store, { limit: 1 })).items;
    expect(first).toEqual({
      apiVersion: "networking.istio.io/v1",
      kind: "DestinationRule",
      metadata: { name: "reviews", namespace: "default", resourceVersion: "7", labels: { app: "r" } },
      spec: { host: "reviews" },
      cluster: "east",
    });
  });

  it.each([
    { q: { kind: "Service" }, error: /kind must be one of/ },
    { q: { namespace: "default" }, error: /namespace needs kind/ },
  ])("refuses $q", async ({ q, error }) => {
    const r = await readConfigz(store, { limit: 10, ...q });
    expect(r.ok ? "" : r.error).toMatch(error);
  });
});

describe("registryz", () => {
  it.each([
    {
      name: "a Kubernetes Service",
      key: keys.service("default", "reviews.default.svc.cluster.local", "east"),
      registry: "Kubernetes",
    },
    {
      name: "a ServiceEntry host",
      key: keys.externalService("default", "api.example.com", "east", "ext"),
      registry: "External",
    },
  ])("$name", ({ key, registry }) => {
    const item = registryzItem(service({ clusterId: "east", exportTo: ["."] }), key);
    expect(item).toMatchObject({
      Attributes: { ServiceRegistry: registry, Name: "reviews", Namespace: "default", ExportTo: ["."] },
      ports: [{ name: "grpc", port: 9080, protocol: "GRPC" }],
      clusterVIPs: { Addresses: { east: ["10.96.0.9"] } },
      Resolution: "ClientSideLB",
      cluster: "east",
    });
  });

  it("pages one namespace's records", async () => {
    const store = createMemoryStore();
    for (const [ns, name] of [
      ["default", "a"],
      ["default", "b"],
      ["prod", "c"],
    ] as const) {
      const host = `${name}.${ns}.svc.cluster.local`;
      await store.put(keys.service(ns, host, "east"), service({ name, namespace: ns, hostname: host }));
    }
    const first = ok(await readRegistryz(store, { limit: 1, namespace: "default" }));
    expect(first.items.map((s) => s.hostname)).toEqual(["a.default.svc.cluster.local"]);
    const second = ok(await readRegistryz(store, { limit: 1, namespace: "default", cursor: first.next }));
    expect(second.items.map((s) => s.hostname)).toEqual(["b.default.svc.cluster.local"]);
    expect(second.next).toBeUndefined();
  });
});

describe("endpointShardz", () => {
  it.each([
    { name: "no locality", e: endpoint(), want: { Locality: { Label: "" }, HealthStatus: "HEALTHY" } },
    {
      name: "region and zone",
      e: endpoint({
        locality: { region: "eu", zone: "eu-1", subzone: "" },
        serviceAccount: "spiffe://x",
        weight: 3,
      }),
      want: { Locality: { Label: "eu/eu-1" }, ServiceAccount: "spiffe://x", LbWeight: 3 },
    },
  ])("an endpoint with $name", ({ e, want }) => {
    expect(shardzEndpoint(e)).toMatchObject({
      Address: "10.1.0.1",
      EndpointPort: 9080,
      ServicePortName: "grpc",
      ...want,
    });
  });

  it("lists hostname ─▶ namespace ─▶ shards, each shard cut to maxShardEndpoints", async () => {
    const store = createMemoryStore();
    const many = Array.from({ length: maxShardEndpoints + 5 }, (_, i) =>
      endpoint({ address: `10.2.${i >> 8}.${i & 255}` }),
    );
    await store.put(
      keys.shards("default", "reviews.default.svc.cluster.local"),
      shards({ shards: { "Kubernetes/east": many } }),
    );
    const { shardz } = ok(await readEndpointShardz(store, { limit: 10 }));
    const entry = shardz["reviews.default.svc.cluster.local"]?.default;
    expect(entry?.Shards["Kubernetes/east"]).toHaveLength(maxShardEndpoints);
    expect(entry?.EndpointsOmitted).toEqual({ "Kubernetes/east": 5 });
  });

  it("ends a page early past maxPageEndpoints, and the cursor resumes after it", async () => {
    const store = createMemoryStore();
    const full = Array.from({ length: maxShardEndpoints }, (_, i) =>
      endpoint({ address: `10.3.${i >> 8}.${i & 255}` }),
    );
    const services = Math.ceil(maxPageEndpoints / maxShardEndpoints) + 2;
    for (let i = 0; i < services; i++) {
      const host = `s${String(i).padStart(2, "0")}.default.svc.cluster.local`;
      await store.put(
        keys.shards("default", host),
        shards({ hostname: host, shards: { "Kubernetes/east": full } }),
      );
    }
    const first = ok(await readEndpointShardz(store, { limit: 200 }));
    expect(Object.keys(first.shardz)).toHaveLength(maxPageEndpoints / maxShardEndpoints);
    const rest = ok(await readEndpointShardz(store, { limit: 200, cursor: first.next }));
    expect(Object.keys(rest.shardz)).toHaveLength(services - maxPageEndpoints / maxShardEndpoints);
    expect(rest.next).toBeUndefined();
  });

  it("names one service by namespace and hostname; hostname alone is refused", async () => {
    const store = createMemoryStore();
    await store.put(keys.shards("default", "reviews.default.svc.cluster.local"), shards());
    const one = ok(
      await readEndpointShardz(store, {
        limit: 1,
        namespace: "default",
        hostname: "reviews.default.svc.cluster.local",
      }),
    );
    expect(Object.keys(one.shardz)).toEqual(["reviews.default.svc.cluster.local"]);
    const r = await readEndpointShardz(store, { limit: 1, hostname: "x" });
    expect(r.ok ? "" : r.error).toMatch(/hostname needs namespace/);
  });
});

describe("the page byte budget", () => {
  it("ends a configz page after the config that takes it past maxPageBytes", async () => {
    const store = createMemoryStore();
    const big = "x".repeat(Math.ceil(maxPageBytes / 2));
    for (const name of ["a", "b", "c", "d"])
      await store.put(
        keys.config("DestinationRule", "default", name, "east"),
        config({ name, spec: { host: big } }),
      );
    const first = ok(await readConfigz(store, { limit: 10 }));
    expect(first.items.map((c) => c.metadata.name)).toEqual(["a", "b"]);
    const rest = ok(await readConfigz(store, { limit: 10, cursor: first.next }));
    expect(rest.items.map((c) => c.metadata.name)).toEqual(["c", "d"]);
    expect(rest.next).toBeUndefined();
  });
});
