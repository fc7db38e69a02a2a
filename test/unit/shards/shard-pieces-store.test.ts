import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/index.ts";
import {
  applyShardUpdate,
  deleteServiceShard,
  updateServiceEndpoints,
} from "../../../lib/shards/endpoint-shards.ts";
import {
  type EndpointShardsHead,
  type EndpointShardsPiece,
  maxPieceEndpoints,
} from "../../../lib/shards/shard-pieces.ts";
import { readShards } from "../../../lib/shards/shard-store.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { countingWrites, east, HOST, NS, numbered, numberedRange, west } from "./builders.ts";

const EAST = "Kubernetes/east";
const WEST = "Kubernetes/west";
const headKey = keys.shards(NS, HOST);

/** The record the unpieced code stored for these updates, in order (applyShardUpdate is unchanged). */
function wholeRecord(updates: [typeof east, Endpoint[]][]): EndpointShardsRecord | undefined {
  let record: EndpointShardsRecord | undefined;
  for (const [shard, endpoints] of updates)
    record = applyShardUpdate(record, shard, HOST, NS, endpoints).record;
  return record;
}

/** Every piece stored for the service: key ─▶ endpoint count. */
async function pieces(store: Store): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await listAll<EndpointShardsPiece>(store, keys.shardPiecePrefix(NS, HOST)))
    out.set(e.key, e.value.endpoints.length);
  return out;
}

/** A store holding one shard of `n` endpoints, and its write log cleared. */
async function stored(n: number) {
  const { store, writes } = countingWrites(createMemoryStore());
  const endpoints = numberedRange(0, n);
  expect(await updateServiceEndpoints(store, east, HOST, NS, endpoints)).toBe("full");
  writes.length = 0;
  return { store, writes, endpoints };
}

describe("a large shard in pieces", () => {
  it("a 5,000-endpoint service is stored as a small head and pieces of at most N endpoints, read back whole", async () => {
    const { store, endpoints } = await stored(5000);
    const head = (await store.get<EndpointShardsHead>(headKey))?.value;
    expect(head?.pieces[EAST]).toHaveLength(5000 / maxPieceEndpoints);
    expect(JSON.stringify(head).length).toBeLessThan(1000);
    const sizes = [...(await pieces(store)).values()];
    expect(sizes).toHaveLength(50);
    for (const n of sizes) expect(n).toBe(maxPieceEndpoints);
    expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, endpoints]]));
  });

  for (const n of [500, 5000]) {
    it(`one endpoint changed at ${n} endpoints ▶ one piece rewritten, the head not (O(1) writes)`, async () => {
      const { store, writes, endpoints } = await stored(n);
      const next = [...endpoints];
      next[n / 2 + 7] = numbered(n / 2 + 7, { health: "UNHEALTHY" });
      expect(await updateServiceEndpoints(store, east, HOST, NS, next)).toBe("incremental");
      expect(writes).toHaveLength(1);
      expect(writes[0]).not.toBe(headKey);
      expect((await pieces(store)).get(writes[0] as string)).toBe(maxPieceEndpoints);
      expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, next]]));

      // Its labels change too: still that one piece.
      writes.length = 0;
      next[n / 2 + 7] = numbered(n / 2 + 7, { labels: { app: "reviews", version: "v3" } });
      expect(await updateServiceEndpoints(store, east, HOST, NS, next)).toBe("incremental");
      expect(writes).toHaveLength(1);

      // One gone, then one new: the room it left is filled, without a new piece.
      writes.length = 0;
      const fewer = next.filter((_, i) => i !== 3);
      expect(await updateServiceEndpoints(store, east, HOST, NS, fewer)).toBe("incremental");
      expect(writes).toHaveLength(1);
      writes.length = 0;
      const more = [...fewer, numbered(n + 1)];
      expect(await updateServiceEndpoints(store, east, HOST, NS, more)).toBe("incremental");
      expect(writes).toHaveLength(1);
      expect((await pieces(store)).size).toBe(n / maxPieceEndpoints);

      // Every piece full: one more makes one new piece, and the head names it.
      writes.length = 0;
      const grown = [...more, numbered(n + 2)];
      expect(await updateServiceEndpoints(store, east, HOST, NS, grown)).toBe("incremental");
      expect(writes).toHaveLength(2);
      expect(writes).toContain(headKey);
      expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, grown]]));
    });
  }

  it("the same endpoints ▶ nothing written, no push", async () => {
    const { store, writes, endpoints } = await stored(5000);
    expect(await updateServiceEndpoints(store, east, HOST, NS, [...endpoints].reverse())).toBe("none");
    expect(writes).toEqual([]);
  });

  it("scaling down rewrites only the pieces that held what went, and removes those emptied", async () => {
    const { store, writes, endpoints } = await stored(5000);
    // Every 40th endpoint of the first 4,000 (one piece in two loses some), and the last 1,000 entirely.
    const gone = new Set([
      ...Array.from({ length: 100 }, (_, i) => i * 40),
      ...Array.from({ length: 1000 }, (_, i) => 4000 + i),
    ]);
    const kept = endpoints.filter((_, i) => !gone.has(i));
    expect(await updateServiceEndpoints(store, east, HOST, NS, kept)).toBe("incremental");
    const touched = new Set([...gone].map((i) => Math.floor(i / maxPieceEndpoints)));
    // 40 pieces rewritten, 10 deleted, and the head that stopped naming them.
    expect(writes).toHaveLength(touched.size + 1);
    expect(writes.filter((k) => k === headKey)).toHaveLength(1);
    expect((await pieces(store)).size).toBe(40);
    expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, kept]]));

    // Scaling up again: new endpoints fill new pieces; fewer than a piece's worth go where they all fit.
    writes.length = 0;
    const added = numberedRange(6000, 6250);
    const grown = [...kept, ...added];
    expect(await updateServiceEndpoints(store, east, HOST, NS, grown)).toBe("incremental");
    // Two full new pieces, then the last 50 in a third (no piece has room for all 50), and the head.
    expect(writes).toHaveLength(4);
    for (const n of (await pieces(store)).values()) expect(n).toBeLessThanOrEqual(maxPieceEndpoints);
    expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, grown]]));
  });

  it("removing every endpoint removes every piece and keeps the service's record (no full push)", async () => {
    const { store, endpoints } = await stored(5000);
    expect(await updateServiceEndpoints(store, east, HOST, NS, [])).toBe("incremental");
    expect((await pieces(store)).size).toBe(0);
    expect((await store.get(headKey))?.value).toEqual(
      wholeRecord([
        [east, endpoints],
        [east, []],
      ]),
    );
    expect(await updateServiceEndpoints(store, east, HOST, NS, endpoints)).toBe("incremental");
    expect(await deleteServiceShard(store, east, HOST, NS)).toBe(true);
    expect(await store.get(headKey)).toBeUndefined();
    expect((await pieces(store)).size).toBe(0);
  });

  it("a service that shrinks to one piece's worth is stored whole again, its pieces deleted (one left unnamed too)", async () => {
    const { store, endpoints } = await stored(5000);
    // A piece no head names (a writer that lost the head's compare-and-set and then needed it no more).
    await store.put<EndpointShardsPiece>(keys.shardPiece(NS, HOST, EAST, 77), { endpoints: [numbered(1)] });
    const few = endpoints.slice(0, maxPieceEndpoints);
    expect(await updateServiceEndpoints(store, east, HOST, NS, few)).toBe("incremental");
    expect((await pieces(store)).size).toBe(0);
    expect((await store.get(headKey))?.value).toEqual(wholeRecord([[east, few]]));
  });

  it("two clusters: each shard has its own pieces; a change in one rewrites one of its pieces", async () => {
    const { store, writes, endpoints } = await stored(5000);
    const remote = [numbered(9000), numbered(9001)];
    expect(await updateServiceEndpoints(store, west, HOST, NS, remote)).toBe("incremental");
    expect(writes).toEqual([keys.shardPiece(NS, HOST, WEST, 0), headKey]);
    writes.length = 0;
    const moved = [
      numbered(9000, { locality: { region: "eu-west-1", zone: "a", subzone: "" } }),
      numbered(9001),
    ];
    expect(await updateServiceEndpoints(store, west, HOST, NS, moved)).toBe("incremental");
    expect(writes).toEqual([keys.shardPiece(NS, HOST, WEST, 0)]);
    expect(await readShards(store, NS, HOST)).toEqual(
      wholeRecord([
        [east, endpoints],
        [west, moved],
      ]),
    );

    // The west cluster deletes the service: its piece goes, east's stay.
    writes.length = 0;
    expect(await deleteServiceShard(store, west, HOST, NS)).toBe(true);
    expect(writes).toEqual([headKey, keys.shardPiece(NS, HOST, WEST, 0)]);
    expect(await readShards(store, NS, HOST)).toEqual(wholeRecord([[east, endpoints]]));
  });

  it("two clusters writing at once both land, each needing the head or not (compare-and-set on the head and each piece)", async () => {
    const { store: inner, endpoints } = await stored(5000);
    let conflicts = 0;
    const store: Store = {
      ...inner,
      async put(key, value, options) {
        const result = await inner.put(key, value, options);
        if (!result.ok) conflicts++;
        return result;
      },
    };
    const changed = [...endpoints];
    changed[1] = numbered(1, { health: "UNHEALTHY" });
    const grown = [...changed, numbered(6000)];
    const remote = [numbered(9000)];
    // East rewrites one piece, west makes its first (and the head): only west writes the head.
    await Promise.all([
      updateServiceEndpoints(store, east, HOST, NS, changed),
      updateServiceEndpoints(store, west, HOST, NS, remote),
    ]);
    expect(conflicts).toBe(0);
    // East needs a new piece, west drops its only one: both rewrite the head from one version, the loser retries.
    await Promise.all([
      updateServiceEndpoints(store, east, HOST, NS, grown),
      updateServiceEndpoints(store, west, HOST, NS, []),
    ]);
    expect(conflicts).toBe(1);
    expect(await readShards(store, NS, HOST)).toEqual(
      wholeRecord([
        [east, changed],
        [west, remote],
        [east, grown],
        [west, []],
      ]),
    );
    // No piece is left over that the head does not name.
    const head = (await store.get<EndpointShardsHead>(headKey))?.value;
    const named = Object.values(head?.pieces ?? {}).flat().length;
    expect((await pieces(store)).size).toBe(named);
  });

  it("a changed set of service accounts ▶ full push, the head rewritten with them", async () => {
    const { store, writes, endpoints } = await stored(5000);
    const next = [...endpoints];
    next[10] = numbered(10, { serviceAccount: "spiffe://cluster.local/ns/bookinfo/sa/reviews" });
    expect(await updateServiceEndpoints(store, east, HOST, NS, next)).toBe("full");
    expect(writes).toHaveLength(2);
    expect(writes).toContain(headKey);
    expect((await store.get<EndpointShardsHead>(headKey))?.value.serviceAccounts).toEqual([
      "spiffe://cluster.local/ns/bookinfo/sa/reviews",
    ]);
  });
});
