/**
 * A service of thousands of endpoints through ingest and a flush: its shard is kept in bounded
 * pieces (lib/shards/shard-pieces.ts), one endpoint's change writes the same few items whatever
 * the service's size, and proxies are served exactly what the record stored whole gave them.
 */
import { describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../../lib/push/run.ts";
import { generators } from "../../../lib/resources/generators/index.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import {
  type EndpointShardsHead,
  isPiecedHead,
  maxPieceEndpoints,
} from "../../../lib/shards/shard-pieces.ts";
import { readShards } from "../../../lib/shards/shard-store.ts";
import { isShardPiece, keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { countingWrites } from "../shards/builders.ts";

const host = "reviews.default.svc.cluster.local";
const claKey = keys.resource(TypeUrl.endpoint, `outbound|9080||${host}`);

const service = {
  type: "ADDED",
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: "default", resourceVersion: "1" },
    spec: { clusterIP: "10.96.0.10", ports: [{ name: "grpc", port: 9080 }] },
  },
};

/** EndpointSlice s of the service: 100 endpoints in two zones, ready unless `notReady` names one. */
function slice(s: number, resourceVersion: string, notReady = -1, type = "ADDED") {
  return {
    type,
    object: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `reviews-${s}`,
        namespace: "default",
        resourceVersion,
        labels: { "kubernetes.io/service-name": "reviews" },
      },
      addressType: "IPv4",
      endpoints: Array.from({ length: 100 }, (_, i) => ({
        addresses: [`10.${1 + Math.floor(s / 200)}.${s % 200}.${i + 1}`],
        conditions: { ready: i !== notReady },
        zone: i % 2 === 0 ? "us-east-1a" : "us-east-1b",
      })),
      ports: [{ name: "grpc", port: 9080 }],
    },
  };
}

const start = 1_700_000_000_000;

/** Ingest and the debounce turn on `store`, on a clock of its own starting at `clock`. */
function createMesh(store: Store, clock = start) {
  const now = () => clock;
  return {
    async ingest(...events: unknown[]) {
      const v = validateEvents(events);
      if (!v.ok) throw new Error(`bad test events: ${JSON.stringify(v.error)}`);
      return applyEvents({ store, now, registry: defaultRegistryOptions }, "east", v.value);
    },
    async settle() {
      clock += defaultDebounceOptions.debounceMax;
      const deps = { store, generators, context: { domainSuffix: "cluster.local" }, now, log: () => {} };
      return (await runDebounceTurn(deps, defaultDebounceOptions)).flushes;
    },
  };
}

/** A store holding the service with `slices` EndpointSlices of 100 endpoints each, settled. */
async function meshOf(slices: number) {
  const { store, writes } = countingWrites(createMemoryStore());
  const mesh = createMesh(store);
  await mesh.ingest(service, ...Array.from({ length: slices }, (_, s) => slice(s, "2")));
  await mesh.settle();
  writes.length = 0;
  return { store, writes, mesh };
}

describe("a service of thousands of endpoints", () => {
  it("is stored in pieces of at most N endpoints", async () => {
    const { store } = await meshOf(50);
    const head = (await store.get<EndpointShardsHead>(keys.shards("default", host)))?.value;
    expect(head && isPiecedHead(head)).toBe(true);
    const pieces = (
      await listAll<{ endpoints: unknown[] }>(store, keys.shardPiecePrefix("default", host))
    ).filter((e) => isShardPiece(e.key));
    expect(pieces).toHaveLength(5000 / maxPieceEndpoints);
    for (const p of pieces) expect(p.value.endpoints.length).toBeLessThanOrEqual(maxPieceEndpoints);
    expect(Object.values((await readShards(store, "default", host))?.shards ?? {}).flat()).toHaveLength(5000);
  });

  it("one endpoint's change writes the same items at 500 and at 5,000 endpoints: one shard piece among them", async () => {
    const written: string[][] = [];
    for (const slices of [5, 50]) {
      const { writes, mesh } = await meshOf(slices);
      await mesh.ingest(slice(3, "3", 42, "MODIFIED"));
      // Which piece, and the queued push's id, differ from run to run.
      written.push(
        writes.map((k) => k.replace(/~\d+$/, "~<piece>").replace(/^(push\/pending\/).*/, "$1<id>")),
      );
      const shardWrites = writes.filter((k) => k.startsWith(keys.allShards()));
      expect(shardWrites).toHaveLength(1);
      expect(isShardPiece(shardWrites[0] as string)).toBe(true);
    }
    expect(written[0]).toEqual(written[1]);
    // The slice's object record and raw piece, one shard piece, the queued push.
    expect(written[0]).toHaveLength(4);
  });

  it("generates the ClusterLoadAssignment the record stored whole generated, byte for byte", async () => {
    const pieced = await meshOf(50);
    const before = (await pieced.store.get<StoredResource>(claKey))?.value.version;
    await pieced.mesh.ingest(slice(7, "3", 13, "MODIFIED"));
    // The same store, its shard put back whole under keys.shards() (the layout before pieces).
    const whole = createMemoryStore();
    for (const e of await listAll(pieced.store, ""))
      if (!isShardPiece(e.key)) await whole.put(e.key, e.value);
    await whole.put(keys.shards("default", host), await readShards(pieced.store, "default", host));
    await pieced.mesh.settle();
    // Settled at the same time as the pieced one (it settled once already).
    await createMesh(whole, start + defaultDebounceOptions.debounceMax).settle();
    const a = (await pieced.store.get<StoredResource>(claKey))?.value;
    const b = (await whole.get<StoredResource>(claKey))?.value;
    expect(a?.version).toBeDefined();
    expect(a?.version).not.toBe(before);
    expect(a?.version).toBe(b?.version);
    expect(Buffer.from(a?.body ?? []).equals(Buffer.from(b?.body ?? []))).toBe(true);
    expect(a?.body.length).toBeGreaterThan(5000 * 20);
  });
});
