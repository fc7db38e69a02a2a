/**
 * The DynamoDB adapter on a real DynamoDB-compatible server (dynalite, started here): the shared
 * Store case suite on a fresh table per case, with every command the adapter sends recorded and
 * checked against the actions the table's IAM policy grants; two writers on two clients racing
 * compare-and-set on one key; and the key layout's promise that hot prefixes are one Query each.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDynamoStore } from "../../../lib/store/dynamodb.ts";
import { tableActions } from "../../../lib/store/dynamodb-table.ts";
import { keys } from "../../../lib/store/keys.ts";
import { listAll, type Store } from "../../../lib/store/store.ts";
import { type RunningDynalite, recordCommands, startDynalite } from "../../support/dynalite.ts";
import { storeCases } from "./store.cases.ts";

let dynalite: RunningDynalite;
let tables = 0;
/** IAM names of every command the adapter's clients sent in this file. */
const sent = new Set<string>();
/** Commands sent since the last reset, by name (for counting Queries). */
let counted: string[] = [];

/** Records every command `client` sends. */
function recorded(client: DynamoDBClient): DynamoDBClient {
  return recordCommands(client, ({ action }) => {
    sent.add(action);
    counted.push(action);
  });
}

let client: DynamoDBClient;

beforeAll(async () => {
  dynalite = await startDynalite();
  client = recorded(dynalite.client());
});

afterAll(async () => {
  await dynalite?.stop();
});

/** A store over a new, empty table. */
async function freshStore(
  options: { client?: DynamoDBClient } = {},
): Promise<{ store: Store; table: string }> {
  const table = `table-${++tables}`;
  await dynalite.createTable(table);
  return {
    store: createDynamoStore({ client: options.client ?? client, table, sleep: async () => {} }),
    table,
  };
}

storeCases("dynamodb (dynalite)", async () => (await freshStore()).store);

describe("dynamodb store", () => {
  it("calls only the actions the table's IAM policy grants, through the whole case suite", () => {
    // Runs after the suite above (vitest runs a file's tests in order).
    expect(sent.size).toBeGreaterThanOrEqual(6);
    expect([...sent].filter((a) => !(tableActions as readonly string[]).includes(a))).toEqual([]);
  });

  it("refuses a key longer than DynamoDB's sort key holds, naming it, before writing anything", async () => {
    const { store } = await freshStore();
    const key = `svc/${"x".repeat(1100)}`;
    await expect(store.put(key, 1)).rejects.toThrow(
      /^dynamodb store: key "svc\/x+.*is too long for DynamoDB \(partition 5 of 2048 bytes, sort 1101 of 1024\)$/,
    );
    await expect(store.get(key)).rejects.toThrow(RangeError);
    expect(await store.list("svc/")).toEqual({ entries: [] });
  });

  it("getMany retries what BatchGetItem leaves unprocessed (over its response cap), with backoff, until every key is read", async () => {
    const table = `table-${++tables}`;
    await dynalite.createTable(table);
    const waits: number[] = [];
    const store = createDynamoStore({
      client,
      table,
      sleep: async (ms) => void waits.push(ms),
    });
    // 60 values of 30 KB that do not deflate: about 2.4 MB, over dynalite's (and DynamoDB's) cap per answer.
    const value = (i: number) => {
      let x = i + 1;
      const noise = Uint8Array.from({ length: 30_000 }, () => {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        return x >>> 24;
      });
      return { i, noise };
    };
    const keysToRead = Array.from({ length: 60 }, (_, i) => `big/${String(i).padStart(2, "0")}`);
    for (const [i, key] of keysToRead.entries()) await store.put(key, value(i));
    counted = [];
    const got = await store.getMany([...keysToRead, "big/missing"]);
    expect(got.size).toBe(60);
    for (const [i, key] of keysToRead.entries()) expect(got.get(key)?.value, key).toStrictEqual(value(i));
    const calls = counted.filter((c) => c === "dynamodb:BatchGetItem").length;
    expect(calls).toBeGreaterThan(1);
    expect(waits).toHaveLength(calls - 1);
    expect(waits.every((ms) => ms > 0 && ms <= 2000)).toBe(true);
  });

  it("two writers on two clients: each version of a key has exactly one winner, no update is lost", async () => {
    const { table } = await freshStore();
    const writers = [dynalite.client(), dynalite.client()].map((c) =>
      createDynamoStore({ client: recorded(c), table }),
    );
    const wins = new Map<number, string>();
    const perWriter = 15;
    const write = async (store: Store, name: string) => {
      for (let done = 0; done < perWriter; ) {
        const current = await store.get<string[]>("counter");
        const next = [...(current?.value ?? []), `${name}${done}`];
        const result = await store.put("counter", next, { ifVersion: current?.version ?? 0 });
        if (!result.ok) continue;
        expect(wins.has(result.version), `version ${result.version} won twice`).toBe(false);
        wins.set(result.version, name);
        done++;
      }
    };
    await Promise.all(writers.map((store, i) => write(store, `w${i}-`)));
    const final = await writers[0]!.get<string[]>("counter");
    expect(final?.version).toBe(2 * perWriter);
    expect([...wins.keys()].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 2 * perWriter }, (_, i) => i + 1),
    );
    // Every write is in the final value, in the order the versions were won.
    expect(final?.value).toHaveLength(2 * perWriter);
    expect(new Set(final?.value).size).toBe(2 * perWriter);
  });

  it("lists each hot prefix with one Query, and short prefixes by walking partitions in key order", async () => {
    const { store } = await freshStore();
    const slices = ["a", "b", "c"].map((s) => keys.slice("ns1", "h1", "c1", s));
    const shards = ["ns2/h1", "ns1/h2", "ns1/h1", "ns3/h0"].map((p) =>
      keys.shards(...(p.split("/") as [string, string])),
    );
    const objects = ["ns1", "ns2"].flatMap((ns) => ["x", "y"].map((n) => keys.object("c1", "Pod", ns, n)));
    const services = ["s1", "s2"].map((h) => keys.service("ns1", h, "c1"));
    for (const key of [...slices, ...shards, ...objects, ...services]) await store.put(key, { key });
    await store.put(keys.slice("ns1", "h1", "c2", "z"), 1); // another cluster: outside the slice prefix

    const queries = async (prefix: string, limit?: number) => {
      counted = [];
      const page = await store.list(prefix, limit === undefined ? {} : { limit });
      return {
        keys: page.entries.map((e) => e.key),
        queries: counted.filter((c) => c === "dynamodb:Query").length,
      };
    };
    expect(await queries(keys.slicePrefix("ns1", "h1", "c1"))).toEqual({ keys: slices, queries: 1 });
    expect(await queries(keys.services())).toEqual({ keys: services, queries: 1 });
    expect(await queries(keys.shardsIn("ns1"))).toEqual({ keys: [shards[2], shards[1]], queries: 1 });
    // shard/ spans a partition per namespace: the directory, then each partition, in key order.
    const allShards = [...shards].sort();
    expect((await listAll(store, keys.allShards())).map((e) => e.key)).toEqual(allShards);
    for (const limit of [1, 2, 3])
      expect(await pageKeys(store, keys.allShards(), limit), `limit ${limit}`).toEqual(allShards);
    expect(await pageKeys(store, keys.objectPrefix("c1", "Pod"), 1)).toEqual([...objects].sort());
    expect(await pageKeys(store, "", 2)).toEqual(
      [...slices, keys.slice("ns1", "h1", "c2", "z"), ...shards, ...objects, ...services].sort(),
    );
  });
});

/** Every key under `prefix`, following cursors `limit` at a time. */
async function pageKeys(store: Store, prefix: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor === undefined ? { limit } : { limit, cursor });
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    out.push(...page.entries.map((e) => e.key));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}
