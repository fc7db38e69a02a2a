/** /debug/networkz (the stored network table) and the network each /debug/endpointShardz endpoint resolves to. */
import { describe, expect, it } from "vitest";
import { readEndpointShardz } from "../../../lib/debug/endpoint-shardz.ts";
import { readNetworkz } from "../../../lib/debug/networkz.ts";
import type { StoredMeshNetworks } from "../../../lib/registry/mesh/mesh-networks.ts";
import type { NetworkTable } from "../../../lib/resources/network-table.ts";
import { updateServiceEndpoints } from "../../../lib/shards/endpoint-shards.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { east, ep, HOST, NS } from "../shards/builders.ts";

const table: NetworkTable = {
  gateways: [
    { network: "far", cluster: "", address: "192.0.2.1", port: 15443, locality: "r/z", source: "address" },
  ],
  networks: [{ name: "far", fromCidr: ["10.9.0.0/16"], fromRegistry: [] }],
  clusters: [{ cluster: "west", network: "west-net", source: "systemNamespace" }],
};

const ok = <T>(r: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

describe("/debug/networkz", () => {
  it("a mesh without networks answers empty lists", async () => {
    expect(await readNetworkz(createMemoryStore())).toEqual({
      meshNetworksSource: "",
      networks: [],
      clusters: [],
      gateways: [],
    });
  });

  it("answers the stored table and where MeshNetworks came from", async () => {
    const store = createMemoryStore();
    await store.put(keys.networkTable(), table);
    await store.put<StoredMeshNetworks>(keys.meshNetworks(), {
      model: { networks: {} },
      source: "configmap:c1/istio-system/istio@7",
    });
    expect(await readNetworkz(store)).toEqual({
      meshNetworksSource: "configmap:c1/istio-system/istio@7",
      networks: table.networks,
      clusters: table.clusters,
      gateways: table.gateways,
    });
  });
});

describe("/debug/endpointShardz networks", () => {
  it("each endpoint shows the network the table resolves it to and how", async () => {
    const store = createMemoryStore();
    await updateServiceEndpoints(store, east, HOST, NS, [
      ep({ address: "10.9.0.1" }),
      ep({ address: "10.0.0.2", network: "pod-net" }),
      ep({ address: "10.0.0.3" }),
    ]);
    const listed = async () =>
      ok(await readEndpointShardz(store, { limit: 10 })).shardz[HOST]?.[NS]?.Shards["Kubernetes/east"]?.map(
        (e) => [e.Address, e.Network, e.NetworkSource],
      );
    // Without a table: the network ingest gave, no source (as before networks).
    expect(await listed()).toEqual([
      ["10.0.0.2", "pod-net", undefined],
      ["10.0.0.3", undefined, undefined],
      ["10.9.0.1", undefined, undefined],
    ]);
    await store.put(keys.networkTable(), table);
    expect(await listed()).toEqual([
      ["10.0.0.2", "pod-net", "label"],
      ["10.0.0.3", undefined, undefined],
      ["10.9.0.1", "far", "fromCidr 10.9.0.0/16"],
    ]);
  });
});
