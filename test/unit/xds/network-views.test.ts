/**
 * Split-horizon EDS served (lib/xds/network-views.ts through lib/xds/view-source.ts) over a real
 * memory store: one derived assignment per view shared by its proxies, bounded, versions as
 * content hashes, pushes through real Delta sessions (NETWORKS_CHANGED re-reads, assignment
 * changes answered through the view), Poll wake-ups.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { readConfigDump } from "../../../lib/debug/config-dump.ts";
import { AddressSchema, SocketAddressSchema } from "../../../lib/gen/envoy/config/core/v3/address_pb.ts";
import { LocalitySchema, MetadataSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { DeltaDiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import { NETWORKS_CHANGED, type NetworkTable } from "../../../lib/resources/network-table.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { createDeltaSession } from "../../../lib/xds/delta.ts";
import { retainedNode } from "../../../lib/xds/node-meta.ts";
import { proxyRecord } from "../../../lib/xds/proxy-record.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { streamStatus } from "../../../lib/xds/status-lists.ts";
import { createStreamView } from "../../../lib/xds/stream-view.ts";
import { createViews, type Views } from "../../../lib/xds/view-source.ts";
import { req } from "./delta-harness.ts";

const EDS = TypeUrl.endpoint;
const NAME = "outbound|80||svc.ns.svc.cluster.local";
const GATEWAY = {
  network: "B",
  cluster: "",
  address: "192.0.2.1",
  port: 15443,
  locality: "",
  source: "address",
};

function ep(address: string, network: string) {
  const socket = create(SocketAddressSchema, { address, portSpecifier: { case: "portValue", value: 8080 } });
  return create(LbEndpointSchema, {
    hostIdentifier: {
      case: "endpoint",
      value: create(EndpointSchema, {
        address: create(AddressSchema, { address: { case: "socketAddress", value: socket } }),
      }),
    },
    loadBalancingWeight: 1,
    metadata: create(MetadataSchema, {
      filterMetadata: { "envoy.transport_socket_match": { tlsMode: "istio" }, istio: { network } },
    }),
  });
}

/** The shared assignment of `addresses` (address ─▶ network), as the flush stores it. */
async function shared(addresses: Record<string, string>): Promise<StoredResource> {
  const lbEndpoints = Object.entries(addresses).map(([a, n]) => ep(a, n));
  const message = create(ClusterLoadAssignmentSchema, {
    clusterName: NAME,
    endpoints: [
      create(LocalityLbEndpointsSchema, {
        locality: create(LocalitySchema, {}),
        lbEndpoints,
        loadBalancingWeight: lbEndpoints.length,
      }),
    ],
  });
  return toStored(
    { name: NAME, schema: ClusterLoadAssignmentSchema, message },
    "ns/svc.ns.svc.cluster.local",
  );
}

const node = (pod: string, metadata: Record<string, string> = {}) => ({
  id: `sidecar~10.0.0.9~${pod}.ns~ns.svc.cluster.local`,
  metadata: { GENERATOR: "grpc", ...metadata },
});

/** The addresses an assignment holds, `address@weight`. */
function addresses(r: { body: Uint8Array } | undefined): string[] {
  if (!r) return [];
  const cla = fromBinary(ClusterLoadAssignmentSchema, r.body);
  return cla.endpoints.flatMap((l) =>
    l.lbEndpoints.map((e) => {
      const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
      return `${a?.case === "socketAddress" ? a.value.address : "?"}@${e.loadBalancingWeight}`;
    }),
  );
}

/** A store holding the shared assignment and a table with B's gateway; it counts reads of the table. */
async function mesh(gateways: NetworkTable["gateways"] = [GATEWAY]) {
  const inner = createMemoryStore();
  let tableReads = 0;
  const store: Store = {
    ...inner,
    get(key) {
      if (key === keys.networkTable()) tableReads++;
      return inner.get(key);
    },
  };
  const cla = await shared({ "10.0.0.1": "A", "10.1.0.1": "B", "10.1.0.2": "B" });
  await store.put(keys.resource(EDS, NAME), cla);
  await store.put(keys.networkTable(), { gateways } satisfies NetworkTable);
  return { store, base: createStoreSource(store), cla, tableReads: () => tableReads };
}

const read = async (views: Views, base: ReturnType<typeof createStoreSource>, n: ReturnType<typeof node>) =>
  (await views.source(await views.forNode(n as never), base).get(EDS, [NAME]))[0];

describe("a network view's assignments", () => {
  it("B's endpoints reach a proxy on A through B's gateway; proxies of one view share one derivation", async () => {
    const { store, base, cla } = await mesh();
    const views = createViews({ store });
    const a1 = await read(views, base, node("p1", { NETWORK: "A" }));
    const a2 = await read(views, base, node("p2", { NETWORK: "A" }));
    expect(addresses(a1)).toEqual(["10.0.0.1@1", "192.0.2.1@2"]);
    expect(a2).toBe(a1);
    expect(a1?.version).not.toBe(cla.version);
    // On B: its own endpoints directly, A's have no gateway (directly reachable).
    const b = await read(views, base, node("p3", { NETWORK: "B" }));
    expect(addresses(b)).toEqual(["10.0.0.1@1", "10.1.0.1@1", "10.1.0.2@1"]);
    expect(b?.version).toBe(cla.version);
  });

  it("an Envoy sidecar reads its assignments through its network view too", async () => {
    const { store, base } = await mesh();
    const views = createViews({ store });
    const proxyless = await read(views, base, node("p1", { NETWORK: "A" }));
    const envoy = { id: node("p2").id, metadata: { NETWORK: "A" } };
    const view = await views.forNode(envoy as never);
    expect(view.sidecar).toBeDefined();
    const [got] = await views.source(view, base).get(EDS, [NAME]);
    expect(got).toBe(proxyless);
  });

  it("the same mesh gives the same versions on another host", async () => {
    const one = await mesh();
    const two = await mesh();
    const n = node("p1", { NETWORK: "A", REQUESTED_NETWORK_VIEW: "A,B" });
    const a = await read(createViews({ store: one.store }), one.base, n);
    const b = await read(createViews({ store: two.store }), two.base, n);
    expect(b?.version).toBe(a?.version);
    expect(b?.body).toEqual(a?.body);
  });

  it("no gateway anywhere: every view reads the shared assignment", async () => {
    const { store, base, cla } = await mesh([]);
    const views = createViews({ store });
    const got = await read(views, base, node("p1", { NETWORK: "A", REQUESTED_NETWORK_VIEW: "A" }));
    expect(got?.version).toBe(cla.version);
    expect(got?.body).toEqual(cla.body);
  });

  it("the table is read once per host, and the derivations held are bounded", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store, maxNetworkEntries: 1 });
    const a = await read(views, m.base, node("p1", { NETWORK: "A" }));
    expect(await read(views, m.base, node("p1", { NETWORK: "A" }))).toBe(a);
    await read(views, m.base, node("p2", { NETWORK: "C" }));
    // A's derivation was evicted by C's: derived again, to the same content.
    const again = await read(views, m.base, node("p1", { NETWORK: "A" }));
    expect(again).not.toBe(a);
    expect(again?.version).toBe(a?.version);
    expect(m.tableReads()).toBe(1);
  });

  it("a push with NETWORKS_CHANGED drops the table; other pushes and namespace views keep it", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store });
    await read(views, m.base, node("p1", { NETWORK: "A" }));
    views.publish({ version: 2, changes: [{ typeUrl: EDS, name: "other", version: "v" }] });
    await read(views, m.base, node("p1", { NETWORK: "A" }));
    expect(m.tableReads()).toBe(1);
    views.publish({
      version: 3,
      changes: [{ typeUrl: EDS, name: "", version: null, view: NETWORKS_CHANGED }],
    });
    await read(views, m.base, node("p1", { NETWORK: "A" }));
    expect(m.tableReads()).toBe(2);
  });
});

describe("Delta streams of a network view", () => {
  const summary = (rs: DeltaDiscoveryResponse[]) =>
    rs.flatMap((r) =>
      r.resources.map((x) => addresses({ body: x.resource?.value ?? new Uint8Array() }).join(" ")),
    );

  async function stream(
    views: Views,
    base: ReturnType<typeof createStoreSource>,
    n: ReturnType<typeof node>,
  ) {
    const view = createStreamView(views, base);
    let i = 0;
    const session = createDeltaSession({ source: view.source, nonce: () => `n${++i}` });
    const first = req({ typeUrl: EDS, resourceNamesSubscribe: [NAME], node: n as never });
    await view.bind(first.node);
    const answered = await session.onRequest(first);
    return {
      answered,
      push: async (changes: ResourceChange[]) =>
        session.onPush(undefined, (await view.push({ version: 2, changes })).changes),
    };
  }

  it("a shared assignment change is answered through the view, never with the shared bytes", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store });
    const s = await stream(views, m.base, node("p1", { NETWORK: "A" }));
    expect(summary(s.answered)).toEqual(["10.0.0.1@1 192.0.2.1@2"]);
    const next = await shared({ "10.0.0.1": "A", "10.1.0.1": "B" });
    await m.store.put(keys.resource(EDS, NAME), next);
    expect(summary(await s.push([next]))).toEqual(["10.0.0.1@1 192.0.2.1@1"]);
  });

  it("NETWORKS_CHANGED: the gateway removed ▶ B's endpoints served directly; nothing sent when nothing changed", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store });
    const s = await stream(views, m.base, node("p1", { NETWORK: "A" }));
    const marker: ResourceChange = { typeUrl: EDS, name: "", version: null, view: NETWORKS_CHANGED };
    expect(await s.push([marker])).toEqual([]);
    await m.store.put(keys.networkTable(), { gateways: [] } satisfies NetworkTable);
    expect(summary(await s.push([marker]))).toEqual(["10.0.0.1@1 10.1.0.1@1 10.1.0.2@1"]);
  });

  it("a stream keeps its network view when a namespace marker re-resolves its namespace's view", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store });
    const s = await stream(views, m.base, node("p1", { NETWORK: "A", REQUESTED_NETWORK_VIEW: "A" }));
    expect(summary(s.answered)).toEqual(["10.0.0.1@1"]);
    const next = await shared({ "10.0.0.2": "A", "10.1.0.1": "B" });
    await m.store.put(keys.resource(EDS, NAME), next);
    expect(
      summary(await s.push([{ typeUrl: TypeUrl.listener, name: "", version: null, view: "*" }])),
    ).toEqual(["10.0.0.2@1"]);
  });
});

describe("Poll and Watch wake-ups", () => {
  it("NETWORKS_CHANGED concerns nodes with a network view, not bare namespace views", async () => {
    const { store } = await mesh();
    const views = createViews({ store });
    const marker = { name: "", view: NETWORKS_CHANGED };
    expect(views.concerns(await views.forNode(node("p1") as never), marker)).toBe(true);
    expect(views.concerns(await views.forNamespace("ns"), marker)).toBe(false);
  });

  it("the agent's local server (sidecarResources false) serves what it holds, whatever the node's network", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store, sidecarResources: false });
    const got = await read(views, m.base, node("p1", { NETWORK: "A" }));
    expect(got?.version).toBe(m.cla.version);
  });
});

describe("the proxy record and config_dump", () => {
  it("a stream keeps NETWORK and REQUESTED_NETWORK_VIEW; config_dump reads what it was sent through that view", async () => {
    const m = await mesh();
    const views = createViews({ store: m.store });
    // On B: served B's endpoints directly, where a node without NETWORK gets B's gateway.
    const n = node("p1", { NETWORK: "B", REQUESTED_NETWORK_VIEW: "B,A" });
    const kept = retainedNode(n as never);
    expect(kept.metadata).toEqual({ GENERATOR: "grpc", NETWORK: "B", REQUESTED_NETWORK_VIEW: "A,B" });
    const derived = await read(views, m.base, n);
    const sent = { versionInfo: "v1", nonce: "n1", versions: { [NAME]: derived?.version ?? "" } };
    const status = streamStatus(kept, [{ typeUrl: EDS }], () => ({
      typeUrl: EDS,
      wildcard: false,
      subscribed: [NAME],
      sent,
    }));
    await m.store.put(keys.proxy(n.id), proxyRecord(status, { streamId: "s", now: 1 }));
    const dump = await readConfigDump(m.store, views, { proxyID: n.id, now: 2 });
    if (!dump.ok) throw new Error(dump.error);
    const [compared] = dump.dump.edgepilot.types;
    expect(compared?.resources).toEqual([
      { name: NAME, sent: derived?.version, published: derived?.version },
    ]);
  });
});
