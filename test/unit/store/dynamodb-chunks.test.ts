/**
 * Values over DynamoDB's item limit, on dynalite: a 5,000-endpoint shard (real model types)
 * round-trips through chunks, a replaced value's chunks are deleted, and a reader racing writers
 * that keep rewriting a chunked key never sees a torn or mixed value through get, getMany or list.
 */
import { type DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/endpoint.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import {
  chunkPayloadBytes,
  createDynamoStore,
  type DynamoStoreOptions,
  dynamoMaxItemBytes,
} from "../../../lib/store/dynamodb.ts";
import { tableActions } from "../../../lib/store/dynamodb-table.ts";
import { valueToBytes } from "../../../lib/store/dynamodb-values.ts";
import { keys } from "../../../lib/store/keys.ts";
import type { Store } from "../../../lib/store/store.ts";
import { type RunningDynalite, recordCommands, startDynalite } from "../../support/dynalite.ts";
import { endpoint } from "../xds/builders.ts";

let dynalite: RunningDynalite;
let admin: DynamoDBClient;
let tables = 0;
const actions: string[] = [];

beforeAll(async () => {
  dynalite = await startDynalite();
  admin = dynalite.client();
});

afterAll(async () => {
  await dynalite?.stop();
});

async function freshStore(o: Partial<DynamoStoreOptions> = {}): Promise<{ store: Store; table: string }> {
  const table = `chunks-${++tables}`;
  await dynalite.createTable(table);
  const client = recordCommands(dynalite.client(), (c) => actions.push(c.action));
  return { store: createDynamoStore({ client, table, sleep: async () => {}, ...o }), table };
}

/** Every item in the table by kind (a test may Scan; the adapter never does). */
async function itemsIn(table: string): Promise<{ heads: number; chunks: number; directory: number }> {
  const items = (await admin.send(new ScanCommand({ TableName: table }))).Items ?? [];
  const pk = (i: (typeof items)[number]) => i.pk?.S ?? "";
  return {
    heads: items.filter((i) => pk(i).startsWith("=")).length,
    chunks: items.filter((i) => pk(i).startsWith("#chunk/")).length,
    directory: items.filter((i) => pk(i) === "#partitions").length,
  };
}

/** A shard the size of a 5,000-endpoint service in three clusters, with labels and identities as a real mesh has them. */
function bigShard(seed: number): EndpointShardsRecord {
  const shards: Record<string, Endpoint[]> = {};
  for (const cluster of ["Kubernetes/c1", "Kubernetes/c2", "Kubernetes/c3"]) shards[cluster] = [];
  for (let i = 0; i < 5000; i++) {
    const cluster = `Kubernetes/c${(i % 3) + 1}`;
    shards[cluster]!.push(
      endpoint({
        address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        port: 9080,
        labels: {
          app: "reviews",
          version: `v${i % 7}`,
          "pod-template-hash": `h${(i * 2654435761 + seed) % 1e9}`,
        },
        locality: { region: "eu-west-1", zone: `eu-west-1${"abc"[i % 3]}`, subzone: "" },
        serviceAccount: `spiffe://cluster.local/ns/default/sa/reviews-${i % 11}`,
        health: i % 50 === seed % 50 ? "UNHEALTHY" : "HEALTHY",
      }),
    );
  }
  return { hostname: "reviews.default.svc.cluster.local", namespace: "default", shards, serviceAccounts: [] };
}

describe("dynamodb store: chunked values", () => {
  it("a 5,000-endpoint shard round-trips whole, at DynamoDB's item limit and in many small chunks", async () => {
    const shard = bigShard(1);
    const encoded = valueToBytes(shard).length;
    const json = JSON.stringify(shard).length;
    console.log(`5,000-endpoint shard: ${json} bytes of JSON, ${encoded} bytes stored (deflated)`);
    const key = keys.shards("default", "reviews.default.svc.cluster.local");
    for (const maxItemBytes of [undefined, 16 * 1024]) {
      const { store, table } = await freshStore(maxItemBytes === undefined ? {} : { maxItemBytes });
      expect(await store.put(key, shard)).toEqual({ ok: true, version: 1 });
      expect((await store.get(key))?.value).toStrictEqual(shard);
      expect((await store.getMany([key])).get(key)?.value).toStrictEqual(shard);
      expect((await store.list(keys.allShards())).entries[0]?.value).toStrictEqual(shard);
      const size = maxItemBytes ?? dynamoMaxItemBytes;
      const { chunks } = await itemsIn(table);
      expect(chunks).toBe(encoded <= size - 200 ? 0 : Math.ceil(encoded / chunkPayloadBytes(size)));
      if (maxItemBytes !== undefined) expect(chunks).toBeGreaterThan(2);
      // Rewritten (conditionally, then not), the replaced chunk sets go.
      expect(await store.put(key, bigShard(2), { ifVersion: 1 })).toEqual({ ok: true, version: 2 });
      expect(await store.put(key, bigShard(3))).toEqual({ ok: true, version: 3 });
      expect((await store.get(key))?.value).toStrictEqual(bigShard(3));
      expect((await itemsIn(table)).chunks).toBe(chunks);
      expect(await store.delete(key, { ifVersion: 3 })).toBe(true);
      expect(await itemsIn(table)).toEqual({ heads: 0, chunks: 0, directory: 1 });
    }
  });

  it("a failed compare-and-set of a chunked value leaves no chunks behind", async () => {
    const { store, table } = await freshStore({ maxItemBytes: 2048 });
    const big = (n: number) => ({ n, text: Array.from({ length: 3000 }, (_, i) => (i * n * 7919) % 10007) });
    await store.put("k/a", big(1));
    expect(await store.put("k/a", big(2), { ifVersion: 0 })).toMatchObject({
      ok: false,
      current: { version: 1 },
    });
    const before = (await itemsIn(table)).chunks;
    expect(await store.put("k/a", big(3), { ifVersion: 7 })).toMatchObject({ ok: false });
    expect((await itemsIn(table)).chunks).toBe(before);
    expect((await store.get("k/a"))?.value).toEqual(big(1));
  });

  it("a reader racing rewriters never sees a torn or mixed value (get, getMany, list)", async () => {
    const { store, table } = await freshStore({ maxItemBytes: 1024 });
    // Each value says who wrote it, and every element repeats it: a mix of two writes shows.
    const value = (writer: number, round: number) => ({
      writer,
      round,
      items: Array.from({ length: 400 }, (_, i) => `${writer}:${round}:${i}:${(i * 2654435761) % 1e6}`),
    });
    type V = ReturnType<typeof value>;
    const whole = (v: V | undefined) =>
      v === undefined ||
      (v.items.length === 400 && v.items.every((s, i) => s === value(v.writer, v.round).items[i]));
    await store.put("hot/k", value(0, 0));
    const writers = 3;
    const rounds = 8;
    let writing = writers;
    const write = async (w: number) => {
      for (let r = 1; r <= rounds; r++) await store.put("hot/k", value(w, r));
      writing--;
    };
    let reads = 0;
    const torn: string[] = [];
    const read = async () => {
      while (writing > 0) {
        const seen = [
          (await store.get<V>("hot/k"))?.value,
          (await store.getMany<V>(["hot/k"])).get("hot/k")?.value,
          (await store.list<V>("hot/")).entries[0]?.value,
        ];
        for (const v of seen) if (!whole(v)) torn.push(`${v?.writer}:${v?.round}`);
        reads += seen.length;
      }
    };
    await Promise.all([read(), read(), ...Array.from({ length: writers }, (_, w) => write(w + 1))]);
    expect(torn).toEqual([]);
    expect(reads).toBeGreaterThan(3);
    const last = (await store.get<V>("hot/k"))!;
    expect(last.version).toBe(1 + writers * rounds);
    expect(whole(last.value)).toBe(true);
    // Only the last value's chunk set remains.
    expect((await itemsIn(table)).chunks).toBe(
      Math.ceil(valueToBytes(last.value).length / chunkPayloadBytes(1024)),
    );
  });

  it("used only actions the table's IAM policy grants, the batch calls included", () => {
    expect(new Set(actions)).toContain("dynamodb:BatchWriteItem");
    expect(new Set(actions)).toContain("dynamodb:BatchGetItem");
    expect([...new Set(actions)].filter((a) => !(tableActions as readonly string[]).includes(a))).toEqual([]);
  });
});
