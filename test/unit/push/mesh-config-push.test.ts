/**
 * The effective mesh wired into generation, through the real ingest and a real flush (memory store,
 * manual clock): a StoredMeshConfig record is written with the store port (as the `istio` ConfigMap
 * ingest writes it) and a Full push naming MeshConfig queued; the resources then follow each field,
 * and a push whose effective settings did not change (nothing stored, a stored default, a change an
 * environment override masks) regenerates nothing.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { RegistryOptions } from "../../../lib/ingest/context.ts";
import { pushRequest } from "../../../lib/model/index.ts";
import { type FlushResult, flush } from "../../../lib/push/flush.ts";
import { afterMeshCheck, namesMeshConfig } from "../../../lib/push/mesh-change.ts";
import { enqueuePush, readQueue } from "../../../lib/push/queue.ts";
import type { MeshConfigModel, StoredMeshConfig } from "../../../lib/registry/mesh/mesh-config.ts";
import type { PushContext } from "../../../lib/resources/push-context.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { loadViewTable } from "../../../lib/resources/view-store.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createSidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule, virtualService } from "../ingest/support/istio.ts";
import { generators } from "../xds/checked-generators.ts";
import { tcpClusterOf } from "../xds/sidecar/inspect.ts";

const port = { name: "http", port: 9080 };
const reviews = "reviews.default.svc.cluster.local";
const ratings = "ratings.other.svc.cluster.local";
const reviewsCluster = `outbound|9080||${reviews}`;

/** Options as parseConfig gives them with no mesh variable set: nothing overrides the stored MeshConfig. */
const unset: Partial<RegistryOptions> = { meshSet: [] };

/** A mesh of reviews (default, pods with a sidecar) and ratings (other), pushed once. */
async function mesh(registry: Partial<RegistryOptions> = unset) {
  const h = createHarness(registry);
  const meshPod = (name: string, ns: string, ip: string) => {
    const p = pod(name, ns, ip);
    return {
      ...p,
      metadata: { ...p.metadata, labels: { ...p.metadata.labels, "security.istio.io/tlsMode": "istio" } },
    };
  };
  await h.ingest(
    ev("ADDED", service("reviews", "default", [port])),
    ev("ADDED", meshPod("reviews", "default", "10.0.0.1")),
    ev("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.0.0.1", ready: true }])),
    ev("ADDED", service("ratings", "other", [port])),
    ev("ADDED", meshPod("ratings", "other", "10.0.1.1")),
    ev("ADDED", endpointSlice("ratings-1", "ratings", "other", port, [{ ip: "10.0.1.1", ready: true }])),
  );
  await h.settle();
  return h;
}

/** Writes the record the ConfigMap ingest writes, and queues its push. */
async function storeMesh(store: Store, model: MeshConfigModel): Promise<void> {
  const record: StoredMeshConfig = { model, unsupported: [], source: "configmap:east/istio-system/istio@9" };
  await store.put(keys.meshConfig(), record);
  const request = pushRequest({
    full: true,
    configs: ["MeshConfig/istio-system/istio"],
    reason: "global",
    start: 0,
  });
  await enqueuePush(store, request, 1_700_000_000_000);
}

type Harness = Awaited<ReturnType<typeof mesh>>;
const pushVersion = async (h: Harness) =>
  (await h.store.get<{ version: number }>(keys.pushVersion()))?.value.version;
const proxylessCluster = async (h: Harness, name = reviewsCluster) => {
  const r = (await h.store.get<StoredResource>(keys.resource(TypeUrl.cluster, name)))?.value;
  return r && fromBinary(ClusterSchema, r.body);
};

/** An Envoy sidecar of namespace `ns` at `ip` (its resources read from the store's push context). */
async function sidecar(h: Harness, typeUrl: string, ns = "default", ip = "10.0.0.1") {
  const snapshots = createSidecarSnapshots({ store: h.store, cache: false, meshEnv: {} });
  const b = snapshots.bind(
    { id: `sidecar~${ip}~p.${ns}~${ns}.svc.cluster.local`, metadata: { NAMESPACE: ns } },
    ns,
  );
  if (!b) throw new Error("not a sidecar");
  return snapshots.resources(b, typeUrl);
}
const listener = async (h: Harness, name: string) => {
  const r = (await sidecar(h, TypeUrl.listener)).find((x) => x.name === name);
  if (!r) throw new Error(`no listener ${name}`);
  return fromBinary(ListenerSchema, r.body);
};

describe("a MeshConfig push whose effective settings did not change regenerates nothing", () => {
  const cases: { name: string; registry?: Partial<RegistryOptions>; model: MeshConfigModel }[] = [
    { name: "nothing implemented set", model: {} },
    {
      name: "Istio's defaults written out",
      model: { trustDomain: "cluster.local", rootNamespace: "istio-system", enableAutoMtls: true },
    },
    {
      name: "a trust domain TRUST_DOMAIN overrides",
      registry: { trustDomain: "env.example", meshSet: ["trustDomain"] },
      model: { trustDomain: "corp.example" },
    },
    {
      name: "auto mTLS off where EDGEPILOT_ENABLE_AUTO_MTLS is set",
      registry: { enableAutoMtls: true, meshSet: ["enableAutoMtls"] },
      model: { enableAutoMtls: false },
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const h = await mesh(c.registry ?? unset);
      const version = await pushVersion(h);
      await storeMesh(h.store, c.model);
      const [flushed] = await h.settle();
      expect(flushed?.changes).toEqual([]);
      expect(await pushVersion(h)).toBe(version);
      expect(await h.store.get(keys.meshApplied())).toBeUndefined();
    });
});

describe("each field, stored and pushed, reaches the resources", () => {
  it("rootNamespace: a DestinationRule in mesh-root applies mesh-wide", async () => {
    const h = await mesh();
    const rule = destinationRule("*.svc.cluster.local", [], {
      namespace: "mesh-root",
      name: "mesh-wide",
      spec: { trafficPolicy: { tls: { mode: "DISABLE" } } },
    });
    await h.ingest(ev("ADDED", rule));
    await h.settle();
    // Auto mTLS (every endpoint has a sidecar): the rule in a namespace that is no root is not consulted.
    expect((await proxylessCluster(h))?.transportSocket).toBeDefined();
    const version = await pushVersion(h);
    await storeMesh(h.store, { rootNamespace: "mesh-root" });
    const [flushed] = await h.settle();
    expect((await proxylessCluster(h))?.transportSocket).toBeUndefined();
    expect(await pushVersion(h)).toBe((version ?? 0) + 1);
    // Every view is told: the root namespace decides which Sidecar and rules apply mesh-wide.
    expect(flushed?.changes.some((c) => c.name === "" && c.view === "*")).toBe(true);
    expect(await h.store.get(keys.meshApplied())).toMatchObject({ value: { rootNamespace: "mesh-root" } });
  });

  it("outboundTrafficPolicy REGISTRY_ONLY: unknown destinations go to BlackHoleCluster", async () => {
    const h = await mesh();
    expect(tcpClusterOf((await listener(h, "virtualOutbound")).filterChains[1])).toBe("PassthroughCluster");
    await storeMesh(h.store, { outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } });
    const [flushed] = await h.settle();
    // Only sidecar resources change; every view is marked, so every sidecar reads its resources again.
    expect(flushed?.changes.map((c) => `${c.view} ${c.name}`)).toEqual(["* "]);
    expect(tcpClusterOf((await listener(h, "virtualOutbound")).filterChains[1])).toBe("BlackHoleCluster");
    const routes = (await sidecar(h, TypeUrl.route)).find((r) => r.name === "9080");
    const vhosts =
      routes && fromBinary(RouteConfigurationSchema, routes.body).virtualHosts.map((v) => v.name);
    expect(vhosts?.at(-1)).toBe("block_all");
  });

  it("defaultServiceExportTo ['.']: a service without exportTo is hidden from other namespaces", async () => {
    const h = await mesh();
    const names = async (ns: string, ip: string) =>
      (await sidecar(h, TypeUrl.cluster, ns, ip)).map((r) => r.name).filter((n) => n.startsWith("outbound|"));
    expect(await names("other", "10.0.1.1")).toContain(reviewsCluster);
    await storeMesh(h.store, { defaultServiceExportTo: ["."] });
    await h.settle();
    expect((await loadViewTable(h.store))?.table.exports).toEqual({
      [`default/${reviews}`]: ["."],
      [`other/${ratings}`]: ["."],
    });
    expect(await names("other", "10.0.1.1")).toEqual([`outbound|9080||${ratings}`]);
    expect(await names("default", "10.0.0.1")).toEqual([reviewsCluster]);
  });

  it("defaultDestinationRuleExportTo and defaultVirtualServiceExportTo ['.']: rules without exportTo stay in their namespace", async () => {
    const h = await mesh();
    const subset = `outbound|9080|v1|${reviews}`;
    const route = `${reviews}:9080`;
    await h.ingest(
      ev("ADDED", destinationRule(reviews, [{ name: "v1", labels: { version: "v1" } }])),
      ev(
        "ADDED",
        virtualService(
          "reviews",
          { http: [{ route: [{ destination: { host: reviews, subset: "v1" } }] }] },
          {
            hosts: [reviews],
          },
        ),
      ),
    );
    await h.settle();
    const shared = (typeUrl: string, name: string) => h.store.get(keys.resource(typeUrl, name));
    const own = (typeUrl: string, name: string) => h.store.get(keys.viewResource("default", typeUrl, name));
    expect(await shared(TypeUrl.cluster, subset)).toBeDefined();
    const publicRoute = (await shared(TypeUrl.route, route))?.version;
    await storeMesh(h.store, { defaultDestinationRuleExportTo: ["."], defaultVirtualServiceExportTo: ["."] });
    await h.settle();
    // Other namespaces no longer see the rules: the shared set loses them, default's view keeps them.
    expect(await shared(TypeUrl.cluster, subset)).toBeUndefined();
    expect(await own(TypeUrl.cluster, subset)).toBeDefined();
    expect((await shared(TypeUrl.route, route))?.version).not.toBe(publicRoute);
    expect(await own(TypeUrl.route, route)).toBeDefined();
  });

  it("trustDomain and aliases: the inbound SANs and the identities ingest builds", async () => {
    const h = await mesh();
    const inbound = async () => {
      const r = (await sidecar(h, TypeUrl.listener)).find((x) => x.name === "virtualInbound");
      return new TextDecoder().decode(r?.body);
    };
    expect(await inbound()).toContain("spiffe://cluster.local/");
    await storeMesh(h.store, { trustDomain: "corp.example", trustDomainAliases: ["old.example"] });
    await h.settle();
    const after = await inbound();
    expect(after).toContain("spiffe://corp.example/");
    expect(after).toContain("spiffe://old.example/");
    expect(after).not.toContain("spiffe://cluster.local/");
    // A pod ingested after the change gets an identity in the new domain.
    await h.ingest(
      ev("ADDED", pod("reviews", "default", "10.0.0.2")),
      ev(
        "MODIFIED",
        endpointSlice("reviews-1", "reviews", "default", port, [
          { ip: "10.0.0.1", ready: true },
          { ip: "10.0.0.2", ready: true },
        ]),
      ),
    );
    const shards = Object.values((await h.shards("default", reviews)) ?? {}).flat();
    expect(shards.find((e) => e.address === "10.0.0.2")?.serviceAccount).toBe(
      "spiffe://corp.example/ns/default/sa/reviews",
    );
  });

  it("enableAutoMtls false: proxyless and sidecar clusters go plaintext", async () => {
    const h = await mesh();
    const sidecarCluster = async () => {
      const r = (await sidecar(h, TypeUrl.cluster)).find((x) => x.name === reviewsCluster);
      return r && fromBinary(ClusterSchema, r.body);
    };
    expect((await proxylessCluster(h))?.transportSocket).toBeDefined();
    expect((await sidecarCluster())?.transportSocketMatches.length).toBeGreaterThan(0);
    await storeMesh(h.store, { enableAutoMtls: false });
    await h.settle();
    expect((await proxylessCluster(h))?.transportSocket).toBeUndefined();
    expect((await sidecarCluster())?.transportSocketMatches).toEqual([]);
  });

  it("discoverySelectors: services of namespaces no selector matches are no longer served", async () => {
    const h = await mesh();
    const ns = (name: string, labels: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, resourceVersion: "1", labels },
    });
    await h.ingest(ev("ADDED", ns("default", { mesh: "on" })), ev("ADDED", ns("other", {})));
    await h.settle();
    expect(await proxylessCluster(h, `outbound|9080||${ratings}`)).toBeDefined();
    await storeMesh(h.store, { discoverySelectors: [{ matchLabels: { mesh: "on" } }] });
    await h.settle();
    expect(await proxylessCluster(h, `outbound|9080||${ratings}`)).toBeUndefined();
    expect(await proxylessCluster(h)).toBeDefined();
  });

  it("DISCOVERY_SELECTORS set explicitly wins over the stored selectors", async () => {
    const h = await mesh({ discoverySelectors: [], meshSet: ["discoverySelectors"] });
    const version = await pushVersion(h);
    await storeMesh(h.store, { discoverySelectors: [{ matchLabels: { mesh: "on" } }] });
    await h.settle();
    expect(await pushVersion(h)).toBe(version);
    expect(await proxylessCluster(h, `outbound|9080||${ratings}`)).toBeDefined();
  });
});

describe("what a MeshConfig push compares with", () => {
  it("the last push context when the process holds it, else the settings the store records as applied", async () => {
    const h = await mesh();
    const run = async (last?: PushContext): Promise<Extract<FlushResult, { kind: "done" }>> => {
      const deps = { store: h.store, generators, context: { domainSuffix: "cluster.local" }, now: () => 1 };
      const queued = (await readQueue(h.store)).map((q) => q.key);
      const r = await flush({ ...deps, ...(last && { lastContext: last }) }, queued);
      if (r.kind !== "done") throw new Error("flush busy");
      return r;
    };
    await storeMesh(h.store, {});
    const first = await run();
    expect(first.changes).toEqual([]);
    expect(first.request?.configsUpdated).toEqual([]);
    await storeMesh(h.store, { rootNamespace: "mesh-root" });
    const second = await run(first.context);
    expect(second.changes.map((c) => `${c.view} ${c.name}`)).toEqual(["* "]);
    expect(second.request?.configsUpdated).toBeNull();
    expect(second.context?.mesh.rootNamespace).toBe("mesh-root");
    // The same settings again: against the context in memory, and against the record without it.
    await storeMesh(h.store, { rootNamespace: "mesh-root", trustDomain: "" });
    expect((await run(second.context)).changes).toEqual([]);
    await storeMesh(h.store, { rootNamespace: "mesh-root" });
    expect((await run()).changes).toEqual([]);
  });
});

describe("mesh-change", () => {
  const req = (configs: string[] | null, full = true) =>
    pushRequest({ full, configs, reason: "global", start: 0 });
  it("namesMeshConfig: a Full push naming MeshConfig, or everything", () => {
    expect(namesMeshConfig(req(["MeshConfig/istio-system/istio"]))).toBe(true);
    expect(namesMeshConfig(req(null))).toBe(true);
    expect(namesMeshConfig(req(["ServiceEntry/default/a"]))).toBe(false);
    expect(namesMeshConfig(req(["MeshConfig/istio-system/istio"], false))).toBe(false);
  });
  it("afterMeshCheck: changed ▶ everything; unchanged ▶ the MeshConfig keys dropped", () => {
    const both = req(["MeshConfig/istio-system/istio", "ServiceEntry/default/a"]);
    expect(afterMeshCheck(both, true).configsUpdated).toBeNull();
    expect(afterMeshCheck(both, false).configsUpdated).toEqual(["ServiceEntry/default/a"]);
    expect(afterMeshCheck(req(null), false).configsUpdated).toBeNull();
  });
});

describe("a Sidecar's outboundTrafficPolicy", () => {
  const sidecarConfig = (mode: string | undefined) => ({
    apiVersion: "networking.istio.io/v1",
    kind: "Sidecar",
    metadata: { name: "default", namespace: "default", resourceVersion: mode ?? "1" },
    spec: { outboundTrafficPolicy: mode ? { mode } : {} },
  });
  it("replaces the mesh's for the proxies it scopes (set without a mode: REGISTRY_ONLY)", async () => {
    const h = await mesh();
    const fallThrough = async (ns: string, ip: string) => {
      const r = (await sidecar(h, TypeUrl.listener, ns, ip)).find((x) => x.name === "virtualOutbound");
      return r && tcpClusterOf(fromBinary(ListenerSchema, r.body).filterChains[1]);
    };
    await h.ingest(ev("ADDED", sidecarConfig(undefined)));
    await h.settle();
    expect(await fallThrough("default", "10.0.0.1")).toBe("BlackHoleCluster");
    expect(await fallThrough("other", "10.0.1.1")).toBe("PassthroughCluster");
    await storeMesh(h.store, { outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } });
    await h.ingest(ev("MODIFIED", sidecarConfig("ALLOW_ANY")));
    await h.settle();
    expect(await fallThrough("default", "10.0.0.1")).toBe("PassthroughCluster");
    expect(await fallThrough("other", "10.0.1.1")).toBe("BlackHoleCluster");
  });
});

describe("through the istio ConfigMap", () => {
  const configMap = (mesh: string, resourceVersion: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio", namespace: "istio-system", resourceVersion, uid: "u1" },
    data: { mesh },
  });
  it("its mesh key reaches the resources; a new version with the same effective settings regenerates nothing", async () => {
    const h = await mesh();
    expect(tcpClusterOf((await listener(h, "virtualOutbound")).filterChains[1])).toBe("PassthroughCluster");
    await h.ingest(ev("ADDED", configMap("outboundTrafficPolicy:\n  mode: REGISTRY_ONLY\n", "10")));
    await h.settle();
    expect(tcpClusterOf((await listener(h, "virtualOutbound")).filterChains[1])).toBe("BlackHoleCluster");
    const version = await pushVersion(h);
    // A field edgepilot does not implement: the record changes, the effective settings do not.
    const same = "outboundTrafficPolicy:\n  mode: REGISTRY_ONLY\naccessLogFile: /dev/stdout\n";
    await h.ingest(ev("MODIFIED", configMap(same, "11")));
    await h.settle();
    expect(await pushVersion(h)).toBe(version);
    await h.ingest(ev("DELETED", configMap(same, "12")));
    await h.settle();
    expect(tcpClusterOf((await listener(h, "virtualOutbound")).filterChains[1])).toBe("PassthroughCluster");
  });
});
