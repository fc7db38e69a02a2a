/**
 * The mesh ConfigMap through ingest over the memory store: a valid one stores StoredMeshConfig and
 * StoredMeshNetworks and queues a Full push naming MeshConfig / MeshNetworks `istio` in
 * ISTIO_NAMESPACE; an invalid one is refused whole (rejected, with the field) and both previous
 * records stay; an unchanged model pushes nothing; a DELETE or a resync without it removes both;
 * a ConfigMap of another name or namespace is refused and never applied; a file-owned key is left
 * to the file.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  applyEvents,
  defaultRegistryOptions,
  type RegistryOptions,
  resync,
  validateEvent,
  type WatchEvent,
} from "../../../lib/ingest/index.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { StoredMeshConfig } from "../../../lib/registry/mesh/mesh-config.ts";
import type { StoredMeshNetworks } from "../../../lib/registry/mesh/mesh-networks.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

const meshYaml = "trustDomain: example.org\naccessLogFile: /dev/stdout\n";
const networksYaml = `
networks:
  west:
    endpoints:
    - fromRegistry: west
    gateways:
    - address: 192.0.2.10
      port: 15443
`;

function configMap(
  data: Record<string, string>,
  resourceVersion: string,
  overrides: { name?: string; namespace?: string } = {},
) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: overrides.name ?? "istio",
      namespace: overrides.namespace ?? "istio-system",
      resourceVersion,
      uid: "u1",
    },
    data,
  };
}

let store: Store;
let registry: RegistryOptions;
let now = 1000;

function screened(raw: unknown[]): WatchEvent[] {
  return raw.map((e) => {
    const r = validateEvent(e);
    if (!r.ok) throw new Error(`${r.error.field}: ${r.error.message}`);
    return r.value;
  });
}
const apply = (...raw: unknown[]) => applyEvents({ store, registry, now: () => now }, "east", screened(raw));
const ev = (type: string, object: unknown) => ({ type, object });
const meshRecord = async () => (await store.get<StoredMeshConfig>(keys.meshConfig()))?.value;
const networksRecord = async () => (await store.get<StoredMeshNetworks>(keys.meshNetworks()))?.value;
/** The queued pushes' ConfigsUpdated and reasons, then the queue emptied. */
async function drain() {
  const q = await readQueue(store);
  for (const i of q) await store.delete(i.key);
  return q.map((i) => ({
    full: i.request.full,
    configs: i.request.configsUpdated,
    reasons: i.request.reasons,
  }));
}

beforeEach(() => {
  store = createMemoryStore();
  registry = defaultRegistryOptions;
  now = 1000;
});

describe("the mesh ConfigMap", () => {
  it("stores both records with their source and pushes Full naming MeshConfig and MeshNetworks", async () => {
    const s = await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    expect(s).toMatchObject({ applied: 1, rejected: [], push: { full: true, configs: 2 } });
    expect(s.unsupported).toEqual(["ConfigMap istio-system/istio: data.mesh.accessLogFile"]);
    expect(await meshRecord()).toEqual({
      model: { trustDomain: "example.org" },
      unsupported: ["accessLogFile"],
      source: "configmap:east/istio-system/istio@10",
    });
    expect(await networksRecord()).toEqual({
      model: {
        networks: {
          west: { endpoints: [{ fromRegistry: "west" }], gateways: [{ port: 15443, address: "192.0.2.10" }] },
        },
      },
      source: "configmap:east/istio-system/istio@10",
    });
    expect(await drain()).toEqual([
      {
        full: true,
        configs: ["MeshConfig/istio-system/istio", "MeshNetworks/istio-system/istio"],
        reasons: { global: 1, networks: 1 },
      },
    ]);
  });

  it("an invalid key refuses the ConfigMap whole, naming the field; both previous records stay", async () => {
    await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    await drain();
    const before = [await meshRecord(), await networksRecord()];
    const bad = `networks:\n  network1:\n    endpoints:\n    - fromCidr: 10.0.0/8\n`;
    const s = await apply(
      ev("MODIFIED", configMap({ mesh: "trustDomain: other.org", meshNetworks: bad }, "11")),
    );
    expect(s.applied).toBe(0);
    expect(s.rejected).toEqual([
      expect.objectContaining({
        kind: "ConfigMap",
        namespace: "istio-system",
        name: "istio",
        field: "data.meshNetworks",
        message: 'networks.network1.endpoints[0].fromCidr: invalid CIDR "10.0.0/8"',
      }),
    ]);
    expect([await meshRecord(), await networksRecord()]).toEqual(before);
    expect(await drain()).toEqual([]);
  });

  it("an unchanged model (only formatting or unsupported fields moved) stores the new source and pushes nothing", async () => {
    await apply(ev("ADDED", configMap({ mesh: meshYaml }, "10")));
    await drain();
    const s = await apply(
      ev(
        "MODIFIED",
        configMap({ mesh: "# reformatted\ntrustDomain:   example.org\nenableTracing: true\n" }, "11"),
      ),
    );
    expect(s.push).toBeNull();
    expect(await drain()).toEqual([]);
    expect(await meshRecord()).toEqual({
      model: { trustDomain: "example.org" },
      unsupported: ["enableTracing"],
      source: "configmap:east/istio-system/istio@11",
    });
  });

  it("a key removed removes its record (defaults again) and pushes for it alone", async () => {
    await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    await drain();
    await apply(ev("MODIFIED", configMap({ mesh: meshYaml }, "11")));
    expect(await networksRecord()).toBeUndefined();
    expect(await drain()).toEqual([
      { full: true, configs: ["MeshNetworks/istio-system/istio"], reasons: { networks: 1 } },
    ]);
  });

  it("a DELETE removes both records and pushes; an older event after it is stale", async () => {
    await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    await drain();
    await apply(ev("DELETED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "12")));
    expect([await meshRecord(), await networksRecord()]).toEqual([undefined, undefined]);
    expect((await drain())[0]?.configs).toEqual([
      "MeshConfig/istio-system/istio",
      "MeshNetworks/istio-system/istio",
    ]);
    const s = await apply(ev("MODIFIED", configMap({ mesh: meshYaml }, "11")));
    expect(s.stale).toBe(1);
    expect(await meshRecord()).toBeUndefined();
  });

  it("a resync without it removes both records", async () => {
    await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    await drain();
    const s = await resync({ store, registry, now: () => now }, "east", {
      kind: "ConfigMap",
      resourceVersion: "20",
      items: [],
    });
    expect(s.deleted).toBe(1);
    expect([await meshRecord(), await networksRecord()]).toEqual([undefined, undefined]);
    expect((await drain()).length).toBe(1);
  });

  it("a ConfigMap of another name is refused by its check, one in another namespace by the handler; neither is applied", async () => {
    const s = await apply(
      ev("ADDED", configMap({ mesh: meshYaml }, "10", { name: "istio-sidecar-injector" })),
      ev("ADDED", configMap({ mesh: meshYaml }, "11", { namespace: "default" })),
    );
    expect(s.rejected.map((r) => [r.namespace, r.name, r.field])).toEqual([
      ["istio-system", "istio-sidecar-injector", "metadata.name"],
      ["default", "istio", "metadata.namespace"],
    ]);
    expect(await meshRecord()).toBeUndefined();
    const listed = await resync({ store, registry, now: () => now }, "east", {
      kind: "ConfigMap",
      resourceVersion: "30",
      items: [configMap({ mesh: meshYaml }, "12", { namespace: "default" })],
    });
    expect(listed.rejected.map((r) => r.field)).toEqual(["metadata.namespace"]);
    expect(await meshRecord()).toBeUndefined();
  });

  it("ISTIO_NAMESPACE moves where it is read", async () => {
    registry = { ...defaultRegistryOptions, istioNamespace: "mesh-admin" };
    const s = await apply(ev("ADDED", configMap({ mesh: meshYaml }, "10", { namespace: "mesh-admin" })));
    expect(s.rejected).toEqual([]);
    expect((await drain())[0]?.configs).toEqual(["MeshConfig/mesh-admin/istio"]);
  });

  it("a key a file owns is ignored (noted once in the answer) and its record is never removed by the ConfigMap", async () => {
    registry = { ...defaultRegistryOptions, meshFiles: { mesh: "/etc/istio/config/mesh" } };
    const file: StoredMeshConfig = {
      model: { trustDomain: "file.org" },
      unsupported: [],
      source: "file:/etc/istio/config/mesh",
    };
    await store.put(keys.meshConfig(), file);
    const s = await apply(ev("ADDED", configMap({ mesh: meshYaml, meshNetworks: networksYaml }, "10")));
    expect(s.unsupported).toContain(
      "ConfigMap istio-system/istio: data.mesh (ignored: MESH_CONFIG_FILE /etc/istio/config/mesh is used)",
    );
    expect(await meshRecord()).toEqual(file);
    expect((await networksRecord())?.source).toBe("configmap:east/istio-system/istio@10");
    await apply(ev("DELETED", configMap({}, "11")));
    expect(await meshRecord()).toEqual(file);
    expect(await networksRecord()).toBeUndefined();
  });
});
