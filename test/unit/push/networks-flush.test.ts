import { fromBinary } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { pushRequest } from "../../../lib/model/index.ts";
import { type FlushDeps, flush } from "../../../lib/push/flush.ts";
import { MESH_NETWORKS_KIND } from "../../../lib/push/network-refresh.ts";
import { enqueuePush, readQueue } from "../../../lib/push/queue.ts";
import type { MeshNetworksModel, StoredMeshNetworks } from "../../../lib/registry/mesh/mesh-networks.ts";
import type { PushVersion } from "../../../lib/resources/changes.ts";
import { NETWORKS_CHANGED, type NetworkTable } from "../../../lib/resources/network-table.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { generators } from "../xds/checked-generators.ts";

const host = "reviews.default.svc.cluster.local";
const cla = `outbound|9080||${host}`;

const service = (name: string, extra: Record<string, unknown> = {}, status?: unknown) => ({
  type: "ADDED",
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", ...extra },
    spec: {
      clusterIP: "10.0.0.1",
      ports: [
        { name: "grpc", port: 9080 },
        { name: "tls", port: 15443 },
      ],
      ...(status !== undefined && { type: "LoadBalancer" }),
    },
    ...(status !== undefined && { status }),
  },
});
const slice = (ips: string[]) => ({
  type: "ADDED",
  object: {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "reviews-1",
      namespace: "default",
      labels: { "kubernetes.io/service-name": "reviews" },
    },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "grpc", port: 50051 }],
  },
});

let clock: number;
let store: Store;
const lines: string[] = [];
const deps = (): FlushDeps => ({
  store,
  generators,
  context: { domainSuffix: "cluster.local" },
  now: () => clock,
  log: (l) => lines.push(l),
});

async function ingest(...events: unknown[]) {
  const v = validateEvents(events);
  if (!v.ok) throw new Error(v.error.message);
  await applyEvents({ store, registry: defaultRegistryOptions, now: () => clock }, "c1", v.value);
}
/** What the meshcfg side does on a MeshNetworks change: store the record, queue a Full push naming it. */
async function setMeshNetworks(model: MeshNetworksModel) {
  await store.put<StoredMeshNetworks>(keys.meshNetworks(), { model, source: "file:/test" });
  const configs = [`${MESH_NETWORKS_KIND}/istio-system/istio`];
  await enqueuePush(store, pushRequest({ full: true, configs, reason: "global", start: clock }), clock++);
}
async function flushQueue() {
  const r = await flush(
    deps(),
    (await readQueue(store)).map((q) => q.key),
  );
  if (r.kind !== "done") throw new Error("busy");
  return r;
}
const names = (r: Awaited<ReturnType<typeof flushQueue>>) =>
  r.changes.map((c) => `${c.typeUrl.split(".").pop()}/${c.name}${c.view ? `@${c.view}` : ""}`);
const pushVersion = async () => (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;
const table = async () => (await store.get<NetworkTable>(keys.networkTable()))?.value;
async function assignmentNetworks(): Promise<string[]> {
  const stored = (await store.get<StoredResource>(keys.resource(TypeUrl.endpoint, cla)))?.value;
  const message = fromBinary(ClusterLoadAssignmentSchema, stored?.body ?? new Uint8Array());
  return message.endpoints.flatMap((l) =>
    l.lbEndpoints.map((e) => String(e.metadata?.filterMetadata.istio?.network ?? "")),
  );
}

const ranges = (gateways: MeshNetworksModel["networks"][string]["gateways"] = []): MeshNetworksModel => ({
  networks: {
    east: { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways },
    west: { endpoints: [{ fromCidr: "10.2.0.0/16" }], gateways: [] },
  },
});

beforeEach(async () => {
  clock = 1_000_000;
  store = createMemoryStore();
  lines.length = 0;
  await ingest(service("reviews"), slice(["10.1.0.1", "10.2.0.1", "10.3.0.1"]));
  await flushQueue();
});

describe("networks in the flush", () => {
  it("a mesh without MeshNetworks stores no table and writes no network metadata", async () => {
    expect(await table()).toBeUndefined();
    expect(await assignmentNetworks()).toEqual(["", "", ""]);
  });

  it("a MeshNetworks with ranges regenerates every assignment with its endpoints' networks, once", async () => {
    await setMeshNetworks(ranges());
    const r = await flushQueue();
    expect(names(r)).toEqual([`ClusterLoadAssignment/${cla}`, `ClusterLoadAssignment/@${NETWORKS_CHANGED}`]);
    expect(await assignmentNetworks()).toEqual(["east", "west", ""]);
    expect((await table())?.networks?.map((n) => n.name)).toEqual(["east", "west"]);
    // The same MeshNetworks again: nothing changes, the push version stays.
    const version = await pushVersion();
    await setMeshNetworks(ranges());
    expect(names(await flushQueue())).toEqual([]);
    expect(await pushVersion()).toBe(version);
  });

  it("a MeshNetworks change of gateways only regenerates nothing: the table changes, no assignment", async () => {
    await setMeshNetworks(ranges());
    await flushQueue();
    const before = (await store.get<StoredResource>(keys.resource(TypeUrl.endpoint, cla)))?.value.version;
    await setMeshNetworks(ranges([{ address: "192.0.2.1", port: 15443, locality: "us-east1" }]));
    const r = await flushQueue();
    expect(names(r)).toEqual([`ClusterLoadAssignment/@${NETWORKS_CHANGED}`]);
    expect((await store.get<StoredResource>(keys.resource(TypeUrl.endpoint, cla)))?.value.version).toBe(
      before,
    );
    expect((await table())?.gateways).toEqual([
      {
        network: "east",
        cluster: "",
        address: "192.0.2.1",
        port: 15443,
        locality: "us-east1",
        source: "address",
      },
    ]);
  });

  it("a gateway Service whose load balancer ingress changes changes the table, not the assignments", async () => {
    await setMeshNetworks({
      networks: {
        east: {
          endpoints: [{ fromRegistry: "c1" }],
          gateways: [{ registryServiceName: `eastgw.default.svc.cluster.local`, port: 15443 }],
        },
      },
    });
    const first = await flushQueue();
    // The cluster's network is new: the assignments carry it; the Service has no ingress yet: no gateway.
    expect(names(first)).toContain(`ClusterLoadAssignment/@${NETWORKS_CHANGED}`);
    expect(await assignmentNetworks()).toEqual(["east", "east", "east"]);
    expect((await table())?.gateways).toEqual([]);
    await ingest(service("eastgw", {}, { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } }));
    const r = await flushQueue();
    expect(names(r).filter((n) => n.startsWith("ClusterLoadAssignment/outbound|9080||reviews"))).toEqual([]);
    expect(names(r)).toContain(`ClusterLoadAssignment/@${NETWORKS_CHANGED}`);
    expect((await table())?.gateways).toEqual([
      {
        network: "east",
        cluster: "c1",
        address: "203.0.113.7",
        port: 15443,
        locality: "",
        source: "registryServiceName:eastgw.default.svc.cluster.local@c1",
      },
    ]);
  });

  it("the system namespace's network label gives its cluster's endpoints that network", async () => {
    const ns = (labels: Record<string, string>) => ({
      type: "MODIFIED",
      object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "istio-system", labels } },
    });
    await ingest(ns({ "topology.istio.io/network": "east" }));
    const r = await flushQueue();
    expect(names(r)).toEqual([`ClusterLoadAssignment/${cla}`, `ClusterLoadAssignment/@${NETWORKS_CHANGED}`]);
    expect(await assignmentNetworks()).toEqual(["east", "east", "east"]);
    expect((await table())?.clusters).toEqual([
      { cluster: "c1", network: "east", source: "systemNamespace" },
    ]);
    await ingest(ns({}));
    await flushQueue();
    expect(await assignmentNetworks()).toEqual(["", "", ""]);
    expect(await table()).toEqual({ gateways: [] });
  });

  it("an address in two ranges takes the first network listed, with one warning line", async () => {
    await setMeshNetworks({
      networks: {
        wide: { endpoints: [{ fromCidr: "10.0.0.0/8" }], gateways: [] },
        narrow: { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways: [] },
      },
    });
    await flushQueue();
    expect(await assignmentNetworks()).toEqual(["wide", "wide", "wide"]);
    const warnings = lines.filter((l) => l.includes("several MeshNetworks fromCidr ranges"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("10.1.0.1 (wide 10.0.0.0/8, narrow 10.1.0.0/16)");
  });
});
