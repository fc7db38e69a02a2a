/**
 * The sidecar snapshots of one host over a real memory store holding the bookinfo services and
 * shards: which nodes get sidecar resources, the sharing rule (one outbound snapshot per class, an
 * inbound one per instance signature), what a push keeps and drops, the LRU bound, and a host that
 * hears no pushes keying them by the push version, and the security policies in the classes (effective
 * mTLS, selecting AuthorizationPolicies, auto mTLS on by default). Every resource served passes
 * Envoy's PGV rules.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { FilterSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { Endpoint } from "../../../lib/model/index.ts";
import type { Push, ResourceChange } from "../../../lib/resources/changes.ts";
import { loadPushContext } from "../../../lib/resources/push-context.ts";
import type { ServiceView, StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { createSidecarSnapshots, type SidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { sidecarChanges } from "../../../lib/xds/sidecar-source.ts";
import { assertEnvoyValid } from "../../support/xds-check.ts";
import { bookinfoViews, ep, host, NS, PROXY_IP } from "./sidecar/bookinfo.ts";

/** A push of `changes` (its version does not matter to the snapshots without a context). */
const push = (changes: ResourceChange[]): Push => ({ version: 1, changes });

const { cluster: CDS, listener: LDS, route: RDS, endpoint: EDS } = TypeUrl;
const productpage = host("productpage");

/** A node of pod `pod` at `ip` in `ns` (Istio metadata; `extra` overrides). */
const node = (ip: string, pod: string, ns = NS, extra: Record<string, string> = {}) => ({
  id: `sidecar~${ip}~${pod}.${ns}~${ns}.svc.cluster.local`,
  metadata: { NAMESPACE: ns, CLUSTER_ID: "Kubernetes", ...extra },
});

async function put(store: Store, view: ServiceView): Promise<void> {
  for (const s of view.services) await store.put(keys.service(s.namespace, s.hostname, s.clusterId), s);
  if (view.shards) await store.put(keys.shards(view.namespace, view.hostname), view.shards);
}

/** The bookinfo mesh in a store; productpage's endpoints at `productpageIps`. */
async function bookinfoStore(productpageIps = [PROXY_IP]) {
  const store = createMemoryStore();
  for (const v of bookinfoViews())
    await put(store, v.hostname === productpage ? withIps(v, productpageIps) : v);
  return store;
}

function withIps(v: ServiceView, ips: string[]): ServiceView {
  const endpoints: Endpoint[] = ips.map((ip) => ep(ip, 9080, "http"));
  return {
    ...v,
    shards: {
      ...(v.shards as NonNullable<ServiceView["shards"]>),
      shards: { "Kubernetes/Kubernetes": endpoints },
    },
  };
}

const versions = (rs: readonly StoredResource[]) => new Map(rs.map((r) => [r.name, r.version]));
const valid = (rs: readonly StoredResource[]) => {
  assertEnvoyValid(
    rs.map((r) => ({ typeUrl: r.typeUrl, name: r.name, value: r.body })),
    "sidecar snapshot",
  );
  return rs;
};

async function read(s: SidecarSnapshots, n: ReturnType<typeof node>, typeUrl: string) {
  const b = s.bind(n, n.metadata.NAMESPACE);
  if (!b) throw new Error(`${n.id}: not bound as a sidecar`);
  return valid(await s.resources(b, typeUrl));
}

const edsChange = (hostname: string): ResourceChange => ({
  typeUrl: EDS,
  name: `outbound|9080||${hostname}`,
  version: "v2",
  body: new Uint8Array(),
  service: `${NS}/${hostname}`,
});

describe("which nodes get sidecar resources", () => {
  const s = createSidecarSnapshots({ store: createMemoryStore(), cache: true });
  it.each([
    ["an Istio sidecar node", node(PROXY_IP, "pp-1"), true],
    ["GENERATOR=grpc", node(PROXY_IP, "pp-1", NS, { GENERATOR: "grpc" }), false],
    [
      "a router (gateway)",
      { id: `router~${PROXY_IP}~gw.${NS}~${NS}.svc.cluster.local`, metadata: {} },
      false,
    ],
    ["a plain id", { id: "my-client", metadata: {} }, false],
    ["an id whose IP is no IP", { id: `sidecar~nope~pp.${NS}~${NS}.svc.cluster.local`, metadata: {} }, false],
  ])("%s", (_, n, sidecar) => {
    expect(s.bind(n, NS) !== undefined).toBe(sidecar);
  });
});

describe("the sharing rule", () => {
  it("one outbound snapshot per class; an inbound one per instance signature", async () => {
    const store = await bookinfoStore([PROXY_IP, "10.0.0.6"]);
    const s = createSidecarSnapshots({ store, cache: true });
    const pp1 = await read(s, node(PROXY_IP, "pp-1"), CDS);
    const pp2 = await read(s, node("10.0.0.6", "pp-2"), CDS);
    const details = await read(s, node("10.0.2.1", "details-1"), CDS);
    // Replicas of one deployment: the very same set.
    expect(versions(pp2)).toEqual(versions(pp1));
    // details shares every outbound cluster, not its inbound side.
    const outbound = (rs: readonly StoredResource[]) => rs.filter((r) => !r.name.startsWith("inbound|"));
    expect(versions(outbound(details))).toEqual(versions(outbound(pp1)));
    expect(versions(details).get("inbound|9080||")).not.toBe(versions(pp1).get("inbound|9080||"));
    expect(pp1.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        "BlackHoleCluster",
        "PassthroughCluster",
        "InboundPassthroughCluster",
        "inbound|9080||",
      ]),
    );
    expect(s.size).toEqual({ outbound: 1, inbound: 2 });
    // Another namespace is another class.
    await read(s, node("10.0.9.1", "x", "other"), CDS);
    expect(s.size).toEqual({ outbound: 2, inbound: 3 });
    const listeners = await read(s, node(PROXY_IP, "pp-1"), LDS);
    expect(listeners.map((r) => r.name)).toEqual(
      expect.arrayContaining(["virtualInbound", "virtualOutbound", "0.0.0.0_9080"]),
    );
    expect((await read(s, node(PROXY_IP, "pp-1"), RDS)).map((r) => r.name)).toContain("9080");
  });

  it("keeps at most maxClasses classes of each part (LRU)", async () => {
    const s = createSidecarSnapshots({ store: await bookinfoStore(), cache: true, maxClasses: 2 });
    for (const ns of ["a", "b", "c", "d"]) await read(s, node("10.0.9.1", "x", ns), CDS);
    expect(s.size).toEqual({ outbound: 2, inbound: 2 });
  });
});

describe("workloadSelector Sidecars", () => {
  /** A stored Sidecar (as ingest stores it) in NS. */
  const sidecarConfig = (name: string, spec: Record<string, unknown>, created: string) => ({
    kind: "Sidecar",
    name,
    namespace: NS,
    clusterId: "Kubernetes",
    resourceVersion: "1",
    labels: {},
    creationTimestamp: created,
    spec,
  });
  const labelled = (ip: string, pod: string, labels: Record<string, string>) => ({
    id: `sidecar~${ip}~${pod}.${NS}~${NS}.svc.cluster.local`,
    metadata: { NAMESPACE: NS, CLUSTER_ID: "Kubernetes", LABELS: labels },
  });
  const outboundOf = (rs: readonly StoredResource[]) =>
    rs.map((r) => r.name).filter((n) => n.startsWith("outbound|"));

  it("applies to the sidecars whose labels match; classes are per Sidecar, not per labels", async () => {
    const store = await bookinfoStore([PROXY_IP, "10.0.0.6"]);
    const only = (hosts: string[]) => ({ egress: [{ hosts }] });
    await store.put(
      keys.config("Sidecar", NS, "pp", "Kubernetes"),
      sidecarConfig(
        "pp",
        { workloadSelector: { labels: { app: "productpage" } }, ...only([`./${host("reviews")}`]) },
        "2026-01-01T00:00:00Z",
      ),
    );
    const s = createSidecarSnapshots({ store, cache: true });
    const read1 = async (n: ReturnType<typeof labelled>) => {
      const b = s.bind(n, NS);
      if (!b) throw new Error("not bound");
      return valid(await s.resources(b, CDS));
    };
    const pp1 = await read1(labelled(PROXY_IP, "pp-1", { app: "productpage", version: "v1" }));
    const pp2 = await read1(labelled("10.0.0.6", "pp-2", { app: "productpage", version: "v2" }));
    const other = await read1(labelled("10.0.9.9", "x-1", { app: "ratings" }));
    expect(outboundOf(pp1)).toEqual([`outbound|9080||${host("reviews")}`]);
    // No Sidecar selects it (namespace-wide ones come from the flush's view table: none here).
    expect(outboundOf(other)).toEqual(
      expect.arrayContaining([
        `outbound|9080||${host("details")}`,
        `outbound|9080||${host("ratings")}`,
        `outbound|9080||${host("reviews")}`,
      ]),
    );
    // Other labels, the same Sidecar: one outbound class, shared.
    expect(versions(pp2.filter((r) => !r.name.startsWith("inbound|")))).toEqual(
      versions(pp1.filter((r) => !r.name.startsWith("inbound|"))),
    );
    expect(s.size.outbound).toBe(2);
    const routes = async (n: ReturnType<typeof labelled>) => {
      const b = s.bind(n, NS);
      if (!b) throw new Error("not bound");
      const rs = await s.resources(b, RDS);
      return rs.map((r) => r.name);
    };
    expect(await routes(labelled(PROXY_IP, "pp-1", { app: "productpage" }))).toEqual(["9080"]);
  });
});

describe("Sidecar ingress listeners", () => {
  it("a wildcard defaultEndpoint sends each replica's inbound cluster to its own IP", async () => {
    const store = await bookinfoStore([PROXY_IP, "10.0.0.6"]);
    await store.put(keys.config("Sidecar", NS, "pp", "Kubernetes"), {
      kind: "Sidecar",
      name: "pp",
      namespace: NS,
      clusterId: "Kubernetes",
      resourceVersion: "1",
      labels: {},
      creationTimestamp: "2026-01-01T00:00:00Z",
      spec: {
        workloadSelector: { labels: { app: "productpage" } },
        ingress: [
          { port: { number: 9080, protocol: "HTTP", name: "http" }, defaultEndpoint: "0.0.0.0:8080" },
        ],
      },
    });
    const s = createSidecarSnapshots({ store, cache: true });
    const target = async (ip: string, pod: string) => {
      const n = { ...node(ip, pod), metadata: { NAMESPACE: NS, LABELS: { app: "productpage" } } };
      const b = s.bind(n, NS);
      if (!b) throw new Error("not bound");
      const inbound = valid(await s.resources(b, CDS)).find((r) => r.name === "inbound|9080||");
      if (!inbound) throw new Error("no inbound|9080||");
      const c = fromBinary(ClusterSchema, inbound.body);
      const a = c.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
      const sock = a?.case === "endpoint" ? a.value.address?.address : undefined;
      return sock?.case === "socketAddress"
        ? `${sock.value.address}:${sock.value.portSpecifier.value}`
        : undefined;
    };
    expect(await target(PROXY_IP, "pp-1")).toBe(`${PROXY_IP}:8080`);
    expect(await target("10.0.0.6", "pp-2")).toBe("10.0.0.6:8080");
    expect(s.size.inbound).toBe(2);
  });
});

describe("what a push keeps", () => {
  it("an EDS-only push keeps every snapshot; any other push drops them all", async () => {
    const s = createSidecarSnapshots({ store: await bookinfoStore(), cache: true });
    const pp = node(PROXY_IP, "pp-1");
    const b = s.bind(pp, NS);
    if (!b) throw new Error("not bound");
    const first = await s.resources(b, CDS);
    const eds = push([edsChange(host("reviews"))]);
    expect(s.endpointsOnly(eds)).toBe(true);
    s.publish(eds);
    expect(await s.instancesChanged(b)).toBe(false);
    // The same resources (the very objects), not rebuilt.
    const again = await s.resources(b, CDS);
    expect(again.length).toBe(first.length);
    expect(again.every((r, i) => r === first[i])).toBe(true);
    expect(s.size).toEqual({ outbound: 1, inbound: 1 });
    const cds = push([
      { typeUrl: CDS, name: `outbound|9080||${host("reviews")}`, version: "x" } as ResourceChange,
    ]);
    expect(s.endpointsOnly(cds)).toBe(false);
    s.publish(cds);
    expect(s.size).toEqual({ outbound: 0, inbound: 0 });
    expect(versions(await s.resources(b, CDS))).toEqual(versions(first));
    s.publish({ version: 3 });
    expect(s.size).toEqual({ outbound: 0, inbound: 0 });
  });

  it("an EDS-only push of a headless service rebuilds the outbound part (its auto mTLS follows its endpoints)", async () => {
    const s = createSidecarSnapshots({ store: await bookinfoStore(), cache: true });
    const b = s.bind(node(PROXY_IP, "pp-1"), NS);
    if (!b) throw new Error("not bound");
    const first = await s.resources(b, CDS);
    s.publish(push([edsChange(host("mongodb"))]));
    const again = await s.resources(b, CDS);
    expect(again.some((r, i) => r !== first[i])).toBe(true);
    expect(versions(again)).toEqual(versions(first));
  });

  it("an EDS-only push that gives the proxy a service instance changes its inbound side", async () => {
    const store = await bookinfoStore();
    const s = createSidecarSnapshots({ store, cache: true });
    const b = s.bind(node("10.0.0.7", "pp-new"), NS);
    if (!b) throw new Error("not bound");
    expect((await s.resources(b, CDS)).map((r) => r.name)).not.toContain("inbound|9080||");
    const pp = bookinfoViews().find((v) => v.hostname === productpage) as ServiceView;
    await put(store, withIps(pp, [PROXY_IP, "10.0.0.7"]));
    s.publish(push([edsChange(productpage)]));
    expect(await s.instancesChanged(b)).toBe(true);
    expect(valid(await s.resources(b, CDS)).map((r) => r.name)).toContain("inbound|9080||");
    expect(await s.instancesChanged(b)).toBe(false);
  });

  it("a stream handed a gathered list (the refresh unsaid) re-reads all once a push made the snapshots stale since it read", async () => {
    const s = createSidecarSnapshots({ store: await bookinfoStore(), cache: true });
    const b = s.bind(node(PROXY_IP, "pp-1"), NS);
    if (!b) throw new Error("not bound");
    await s.resources(b, CDS);
    const eds = () => [edsChange(host("reviews"))];
    const passed = eds();
    expect(await sidecarChanges(s, b, push(passed), passed)).toEqual({ changes: passed });
    s.publish({ version: 2, changes: [], refresh: true });
    const gathered = eds();
    expect(await sidecarChanges(s, b, push(gathered), gathered)).toEqual({ changes: undefined });
    // Once it read again, assignments pass through again.
    await s.resources(b, CDS);
    const after = eds();
    expect(await sidecarChanges(s, b, push(after), after)).toEqual({ changes: after });
  });

  it("reads the context a flush in this process handed on with the push, not one of its own", async () => {
    const store = await bookinfoStore();
    let listed = 0;
    const counting: Store = {
      ...store,
      list(prefix, options) {
        if (prefix === keys.services()) listed++;
        return store.list(prefix, options);
      },
    };
    const s = createSidecarSnapshots({ store: counting, cache: true });
    const b = s.bind(node(PROXY_IP, "pp-1"), NS);
    if (!b) throw new Error("not bound");
    const first = await s.resources(b, CDS);
    expect(listed).toBe(1);
    const ctx = await loadPushContext(store, { domainSuffix: "cluster.local" });
    await ctx.services();
    const handed: Push = { version: ctx.version, changes: [], refresh: true, context: ctx };
    s.publish(handed);
    expect(versions(await s.resources(b, CDS))).toEqual(versions(first));
    expect(listed).toBe(1);
    // Another host's options: its own context, read from the store.
    const other = createSidecarSnapshots({
      store: counting,
      cache: true,
      mesh: { domainSuffix: "example.org" },
    });
    const ob = other.bind(node(PROXY_IP, "pp-1"), NS);
    if (!ob) throw new Error("not bound");
    other.publish(handed);
    await other.resources(ob, CDS);
    expect(listed).toBe(2);
  });

  it("answers even when every context it reads is made stale by a push meanwhile, and caches none of them", async () => {
    const store = await bookinfoStore();
    let s: SidecarSnapshots | undefined;
    let reads = 0;
    // Every read of the context (it lists the services) is overtaken by an unnamed push.
    const pushing: Store = {
      ...store,
      list(prefix, options) {
        if (prefix === keys.services()) {
          reads++;
          s?.publish({ version: reads });
        }
        return store.list(prefix, options);
      },
    };
    s = createSidecarSnapshots({ store: pushing, cache: true });
    const b = s.bind(node(PROXY_IP, "pp-1"), NS);
    if (!b) throw new Error("not bound");
    const clusters = valid(await s.resources(b, CDS));
    expect(clusters.map((r) => r.name)).toContain(`outbound|9080||${host("reviews")}`);
    // The first read and three more, then the answer from the last; nothing kept of a stale context.
    expect(reads).toBe(4);
    expect(s.size).toEqual({ outbound: 0, inbound: 0 });
  });

  it("a host that hears no pushes keys them by the push version", async () => {
    const store = await bookinfoStore();
    const s = createSidecarSnapshots({ store, cache: false });
    const pp = node(PROXY_IP, "pp-1");
    const before = (await read(s, pp, CDS)).map((r) => r.name);
    expect(before).not.toContain("outbound|9080||late.default.svc.cluster.local");
    const late = bookinfoViews()[1] as ServiceView;
    const svc = {
      ...(late.services[0] as ServiceView["services"][number]),
      hostname: host("late"),
      name: "late",
    };
    await put(store, { ...late, hostname: svc.hostname, services: [svc], shards: undefined });
    expect((await read(s, pp, CDS)).map((r) => r.name)).toEqual(before);
    await store.put(keys.pushVersion(), { version: 7, at: 0 });
    expect((await read(s, pp, CDS)).map((r) => r.name)).toContain(`outbound|9080||${host("late")}`);
  });
});

describe("security policies in the classes", () => {
  /** A stored security.istio.io config (as ingest stores it) in NS. */
  const config = (kind: string, name: string, spec: Record<string, unknown>) => ({
    kind,
    name,
    namespace: NS,
    clusterId: "Kubernetes",
    resourceVersion: "1",
    labels: {},
    creationTimestamp: "2026-01-01T00:00:00Z",
    spec,
  });
  const put = (store: Store, kind: string, name: string, spec: Record<string, unknown>) =>
    store.put(keys.config(kind, NS, name, "Kubernetes"), config(kind, name, spec));
  const labelled = (ip: string, pod: string, labels: Record<string, string>) => ({
    id: `sidecar~${ip}~${pod}.${NS}~${NS}.svc.cluster.local`,
    metadata: { NAMESPACE: NS, CLUSTER_ID: "Kubernetes", LABELS: labels },
  });
  const readAs = async (s: SidecarSnapshots, n: ReturnType<typeof labelled>, typeUrl: string) => {
    const b = s.bind(n, NS);
    if (!b) throw new Error("not bound");
    return valid(await s.resources(b, typeUrl));
  };
  const inboundVersion = (rs: readonly StoredResource[]) =>
    rs.find((r) => r.name === "virtualInbound")?.version;

  it("replicas with another effective mTLS never share an inbound snapshot; other labels under one policy do", async () => {
    const store = await bookinfoStore([PROXY_IP, "10.0.0.6", "10.0.0.7"]);
    await put(store, "PeerAuthentication", "strict-pp", {
      selector: { matchLabels: { app: "productpage" } },
      mtls: { mode: "STRICT" },
    });
    const s = createSidecarSnapshots({ store, cache: true });
    const strict1 = await readAs(s, labelled(PROXY_IP, "pp-1", { app: "productpage", version: "v1" }), LDS);
    const strict2 = await readAs(s, labelled("10.0.0.6", "pp-2", { app: "productpage", version: "v2" }), LDS);
    const other = await readAs(s, labelled("10.0.0.7", "pp-3", { app: "canary" }), LDS);
    expect(inboundVersion(strict2)).toBe(inboundVersion(strict1));
    expect(inboundVersion(other)).not.toBe(inboundVersion(strict1));
    expect(s.size).toEqual({ outbound: 1, inbound: 2 });
    // Outbound is one class: a workload policy does not change what clients send.
    const outbound = (rs: readonly StoredResource[]) => rs.filter((r) => r.name !== "virtualInbound");
    expect(versions(outbound(other))).toEqual(versions(outbound(strict1)));
  });

  it("an AuthorizationPolicy with a selector splits the class; its RBAC filters reach the selected proxy's chains", async () => {
    const store = await bookinfoStore([PROXY_IP, "10.0.0.6"]);
    await put(store, "AuthorizationPolicy", "deny-pp", {
      selector: { matchLabels: { app: "productpage" } },
      action: "DENY",
      rules: [{}],
    });
    const rbac = create(FilterSchema, { name: "envoy.filters.network.rbac" });
    const s = createSidecarSnapshots({
      store,
      cache: true,
      authz: (p) => (p.deny.length > 0 ? { http: [], tcp: [rbac] } : undefined),
    });
    const selected = await readAs(s, labelled(PROXY_IP, "pp-1", { app: "productpage" }), LDS);
    const not = await readAs(s, labelled("10.0.0.6", "pp-2", { app: "other" }), LDS);
    expect(inboundVersion(selected)).not.toBe(inboundVersion(not));
    expect(s.size.inbound).toBe(2);
    const has = (rs: readonly StoredResource[]) =>
      new TextDecoder("latin1").decode(rs.find((r) => r.name === "virtualInbound")?.body).includes(rbac.name);
    expect([has(selected), has(not)]).toEqual([true, false]);
  });

  it("auto mTLS is on by default and plaintext toward a DISABLE namespace; enableAutoMtls false switches it off", async () => {
    const reviews = `outbound|9080||${host("reviews")}`;
    const matches = async (s: SidecarSnapshots) => {
      const c = (await read(s, node(PROXY_IP, "pp-1"), CDS)).find((r) => r.name === reviews);
      if (!c) throw new Error("no reviews cluster");
      return fromBinary(ClusterSchema, c.body).transportSocketMatches.map((m) => m.name);
    };
    const store = await bookinfoStore();
    expect(await matches(createSidecarSnapshots({ store, cache: true }))).toEqual([
      "tlsMode-istio",
      "tlsMode-disabled",
    ]);
    const off = createSidecarSnapshots({ store, cache: true, mesh: { enableAutoMtls: false } });
    expect(await matches(off)).toEqual([]);
    await put(store, "PeerAuthentication", "default", { mtls: { mode: "DISABLE" } });
    expect(await matches(createSidecarSnapshots({ store, cache: true }))).toEqual([]);
  });
});
