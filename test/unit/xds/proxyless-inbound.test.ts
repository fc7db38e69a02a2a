/**
 * Proxyless gRPC server listeners as a stream reads them (lib/xds/proxyless-inbound.ts through
 * view-source.ts) over a real memory store: which names are served to which node, the mode each
 * PeerAuthentication gives, sharing between replicas, the RBAC filters AuthorizationPolicies give, and a
 * push that changes a policy re-reading only a stream whose listener changed.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { type Listener, ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import {
  type HttpConnectionManager,
  HttpConnectionManagerSchema,
} from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { Push } from "../../../lib/resources/changes.ts";
import { SERVER_LISTENER_PREFIX } from "../../../lib/resources/generators/server-listener.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { createStreamView } from "../../../lib/xds/stream-view.ts";
import { createViews } from "../../../lib/xds/view-source.ts";
import { endpoint, port, service, shards } from "./builders.ts";

const NS = "app";
const HOST = `greeter.${NS}.svc.cluster.local`;
const LDS = TypeUrl.listener;
const inbound = (addr: string) => `${SERVER_LISTENER_PREFIX}${addr}`;

/** greeter (port 80 ▶ target 50051) with endpoints at `ips`, labelled app: greeter plus `labels`. */
function greeter(ips: string[], labels: Record<string, string> = {}): ServiceView {
  const svc = service({ hostname: HOST, name: "greeter", namespace: NS, ports: [port({ port: 80 })] });
  const eps = ips.map((address) => endpoint({ address, port: 50051, labels: { app: "greeter", ...labels } }));
  return {
    hostname: HOST,
    namespace: NS,
    services: [svc],
    shards: { ...shards({ "Kubernetes/Kubernetes": eps }), hostname: HOST, namespace: NS },
  };
}

async function put(store: Store, v: ServiceView) {
  for (const s of v.services) await store.put(keys.service(s.namespace, s.hostname, s.clusterId), s);
  if (v.shards) await store.put(keys.shards(v.namespace, v.hostname), v.shards);
}

/** Stores an Istio security config as ingest keeps it (StoredConfig). */
async function policy(
  store: Store,
  kind: "PeerAuthentication" | "AuthorizationPolicy",
  name: string,
  spec: unknown,
  ns = NS,
) {
  await store.put(keys.config(kind, ns, name, "Kubernetes"), {
    kind,
    name,
    namespace: ns,
    clusterId: "Kubernetes",
    resourceVersion: "1",
    labels: {},
    spec,
    creationTimestamp: "2026-01-01T00:00:00Z",
  });
}

/** A proxyless node of pod `pod` at `ip` (GENERATOR grpc, its labels). */
const grpcNode = (ip: string, pod: string, labels: Record<string, string> = { app: "greeter" }) =>
  create(NodeSchema, {
    id: `sidecar~${ip}~${pod}.${NS}~${NS}.svc.cluster.local`,
    metadata: { GENERATOR: "grpc", NAMESPACE: NS, LABELS: labels },
  });

async function stream(store: Store, node = grpcNode("10.0.0.5", "greeter-1")) {
  const views = createViews({ store });
  const s = createStreamView(views, createStoreSource(store));
  await s.bind(node);
  return { views, s };
}

const chains = (l: Listener) => l.filterChains.map((c) => c.name);
const read = async (s: Awaited<ReturnType<typeof stream>>["s"], names: string[]) =>
  (await s.source.get(LDS, names)).map((r) => ({ r, l: fromBinary(ListenerSchema, r.body) }));

describe("proxyless gRPC server listeners (per proxy, from the push context)", () => {
  it("serves the wildcard and the proxy's own IP on an instance's target port, nothing else", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    const { s } = await stream(store);
    const got = await read(s, [
      inbound("0.0.0.0:50051"),
      inbound("[::]:50051"),
      inbound("10.0.0.5:50051"),
      inbound("10.0.0.6:50051"), // another workload's IP
      inbound("0.0.0.0:50052"), // no instance on that port
      inbound("0.0.0.0:80"), // the service port, not the target port
      inbound("greeter:50051"), // malformed
    ]);
    expect(got.map((g) => g.r.name)).toEqual([
      inbound("0.0.0.0:50051"),
      inbound("10.0.0.5:50051"),
      inbound("[::]:50051"),
    ]);
    expect(got.map((g) => g.l.address?.address.value)).toMatchObject([
      { address: "0.0.0.0" },
      { address: "10.0.0.5" },
      { address: "::" },
    ]);
    // No policy: PERMISSIVE, plaintext (a gRPC server cannot sniff TLS).
    for (const g of got) expect(chains(g.l)).toEqual(["inbound-plaintext"]);
  });

  it("an Envoy sidecar node and a node that is not an Istio node id get no server listener", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    const envoy = create(NodeSchema, {
      id: `sidecar~10.0.0.5~greeter-1.${NS}~${NS}.svc.cluster.local`,
      metadata: { NAMESPACE: NS },
    });
    const other = create(NodeSchema, { id: "plain-client", metadata: { GENERATOR: "grpc" } });
    for (const n of [envoy, other]) {
      const { s } = await stream(store, n);
      expect(await s.source.get(LDS, [inbound("0.0.0.0:50051")])).toEqual([]);
    }
  });

  it.each([
    ["STRICT", {}, "inbound-mtls"],
    ["PERMISSIVE", {}, "inbound-plaintext"],
    ["PERMISSIVE", { "security.istio.io/tlsMode": "istio" }, "inbound-mtls"],
    ["DISABLE", { "security.istio.io/tlsMode": "istio" }, "inbound-plaintext"],
  ])("namespace PeerAuthentication %s, labels %j ▶ %s", async (mode, extra, chain) => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"], extra));
    await policy(store, "PeerAuthentication", "default", { mtls: { mode } });
    const { s } = await stream(store, grpcNode("10.0.0.5", "greeter-1", { app: "greeter", ...extra }));
    const [got] = await read(s, [inbound("0.0.0.0:50051")]);
    expect(chains(got?.l as Listener)).toEqual([chain]);
  });

  it("a port-level mode of a workload policy applies to that target port", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    await policy(store, "PeerAuthentication", "greeter", {
      selector: { matchLabels: { app: "greeter" } },
      mtls: { mode: "DISABLE" },
      portLevelMtls: { 50051: { mode: "STRICT" } },
    });
    const { s } = await stream(store);
    const [got] = await read(s, [inbound("0.0.0.0:50051")]);
    expect(chains(got?.l as Listener)).toEqual(["inbound-mtls"]);
  });

  it("replicas of one workload share one listener (one version, one encoding)", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5", "10.0.0.6"]));
    const { views } = await stream(store);
    const a = createStreamView(views, createStoreSource(store));
    const b = createStreamView(views, createStoreSource(store));
    await a.bind(grpcNode("10.0.0.5", "greeter-1"));
    await b.bind(grpcNode("10.0.0.6", "greeter-2"));
    const [ra] = await a.source.get(LDS, [inbound("0.0.0.0:50051")]);
    const [rb] = await b.source.get(LDS, [inbound("0.0.0.0:50051")]);
    expect(ra).toBeDefined();
    expect(rb).toBe(ra);
  });

  it("the HTTP filters of a workload that policies select: grpcgen's RBAC filters, DENY then ALLOW, then the router", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    await policy(store, "AuthorizationPolicy", "deny-all", { action: "DENY", rules: [{}] });
    await policy(store, "AuthorizationPolicy", "allow-sleep", {
      rules: [{ from: [{ source: { principals: ["cluster.local/ns/app/sa/sleep"] } }] }],
    });
    const { s } = await stream(store);
    const [got] = await read(s, [inbound("0.0.0.0:50051")]);
    const hcm = got?.l.filterChains[0]?.filters[0]?.configType;
    expect(hcm?.case).toBe("typedConfig");
    const manager = anyUnpack(
      (hcm as { value: Any }).value,
      HttpConnectionManagerSchema,
    ) as HttpConnectionManager;
    expect(manager.httpFilters.map((f) => f.name)).toEqual([
      "envoy.filters.http.rbac.DENY",
      "envoy.filters.http.rbac",
      "envoy.filters.http.router",
    ]);
  });

  it("a policy change re-reads the stream that holds a listener it changes, and only then", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    const { s } = await stream(store);
    const shared = createStreamView(createViews({ store }), createStoreSource(store));
    await shared.bind(grpcNode("10.0.0.5", "greeter-1"));
    expect(await read(s, [inbound("0.0.0.0:50051")])).toHaveLength(1);
    const refresh = (version: number): Push => ({ version, changes: [], refresh: true });
    // Nothing changed for it: the push passes as it is.
    expect(await s.push(refresh(2))).toEqual({ changes: [] });
    await policy(store, "PeerAuthentication", "default", { mtls: { mode: "STRICT" } });
    expect(await s.push(refresh(3))).toEqual({ changes: undefined });
    const [got] = await read(s, [inbound("0.0.0.0:50051")]);
    expect(chains(got?.l as Listener)).toEqual(["inbound-mtls"]);
    // A stream that never asked for a server listener takes the push as any proxyless stream.
    expect(await shared.push(refresh(4))).toEqual({ changes: [] });
  });

  it("an instance that goes away takes the listener with it on the next push", async () => {
    const store = createMemoryStore();
    await put(store, greeter(["10.0.0.5"]));
    const { s } = await stream(store);
    expect(await read(s, [inbound("0.0.0.0:50051")])).toHaveLength(1);
    await put(store, greeter(["10.0.0.6"]));
    const eds = {
      typeUrl: TypeUrl.endpoint,
      name: `outbound|80||${HOST}`,
      version: "v2",
      service: `${NS}/${HOST}`,
    };
    expect(await s.push({ version: 2, changes: [eds] })).toEqual({ changes: undefined });
    expect(await s.source.get(LDS, [inbound("0.0.0.0:50051")])).toEqual([]);
  });
});
