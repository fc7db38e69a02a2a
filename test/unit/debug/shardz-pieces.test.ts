/** /debug/endpointShardz and pilot_endpoint_not_ready over a service whose shard is kept in pieces. */
import { describe, expect, it } from "vitest";
import { maxShardEndpoints, readEndpointShardz } from "../../../lib/debug/endpoint-shardz.ts";
import { addInventory } from "../../../lib/metrics/inventory.ts";
import { createRegistry } from "../../../lib/metrics/registry.ts";
import { updateServiceEndpoints } from "../../../lib/shards/endpoint-shards.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { east, ep, HOST, NS, numbered, numberedRange } from "../shards/builders.ts";

const small = "ratings.bookinfo.svc.cluster.local";

/** A store with HOST at 5,000 endpoints (3 of them not ready, in pieces) and a small service (1 not ready). */
async function mesh() {
  const store = createMemoryStore();
  const large = numberedRange(0, 5000);
  for (const i of [7, 2500, 4999]) large[i] = numbered(i, { health: "UNHEALTHY" });
  await updateServiceEndpoints(store, east, HOST, NS, large);
  await updateServiceEndpoints(store, east, small, NS, [
    ep(),
    ep({ address: "10.0.0.2", health: "DRAINING" }),
  ]);
  return store;
}

const ok = <T>(r: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

describe("a service in pieces", () => {
  it("is listed once per page, whole (cut to maxShardEndpoints), beside the others", async () => {
    const { shardz, next } = ok(await readEndpointShardz(await mesh(), { limit: 100 }));
    expect(next).toBeUndefined();
    expect(Object.keys(shardz).sort()).toEqual([small, HOST]);
    const entry = shardz[HOST]?.[NS];
    expect(entry?.Shards["Kubernetes/east"]).toHaveLength(maxShardEndpoints);
    expect(entry?.EndpointsOmitted).toEqual({ "Kubernetes/east": 5000 - maxShardEndpoints });
    expect(shardz[small]?.[NS]?.Shards["Kubernetes/east"]).toHaveLength(2);
  });

  it("is read whole when named", async () => {
    const { shardz } = ok(
      await readEndpointShardz(await mesh(), { limit: 1, namespace: NS, hostname: HOST }),
    );
    expect(shardz[HOST]?.[NS]?.EndpointsOmitted).toEqual({ "Kubernetes/east": 5000 - maxShardEndpoints });
  });

  it("counts its endpoints that are not ready once each in pilot_endpoint_not_ready", async () => {
    const registry = createRegistry();
    addInventory(registry, await mesh());
    expect(await registry.expose()).toMatch(/^pilot_endpoint_not_ready 4$/m);
  });
});
