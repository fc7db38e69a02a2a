import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createStagedStore } from "../../../lib/store/staged.ts";
import { type Entry, listAll, type Store } from "../../../lib/store/store.ts";
import { storeCases } from "./store.cases.ts";

// The view itself must be a Store in every respect: the shared suite over an empty base.
storeCases("staged view over memory", () => createStagedStore(createMemoryStore()));

const dump = async (store: Store, prefix = "") =>
  (await listAll(store, prefix)).map((e: Entry) => [e.key, e.value] as const);

async function seeded(keys: readonly string[]): Promise<Store> {
  const base = createMemoryStore();
  for (const key of keys) await base.put(key, { base: key });
  return base;
}

/** One operation of a random batch, applied to a plain store and to a staged view alike. */
type Op = { op: "put"; key: string; value: number } | { op: "delete"; key: string };

const keyArb = fc.constantFrom(
  "a/",
  "a/1",
  "a/2",
  "a/3",
  "a/\u{1f600}",
  "a/\uffff",
  "b/1",
  "b/2",
  "c",
  "a/10",
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("put" as const), key: keyArb, value: fc.integer() }),
  fc.record({ op: fc.constant("delete" as const), key: keyArb }),
);

async function run(store: Store, ops: readonly Op[]) {
  for (const o of ops) {
    if (o.op === "put") await store.put(o.key, o.value);
    else await store.delete(o.key);
  }
}

describe("staged view over a populated store", () => {
  it("reads, versions and every page size agree with the same writes made directly", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { maxLength: 8 }),
        fc.array(opArb, { maxLength: 20 }),
        fc.integer({ min: 1, max: 5 }),
        async (seed, ops, limit) => {
          const direct = await seeded(seed);
          const base = await seeded(seed);
          const staged = createStagedStore(base);
          await run(direct, ops);
          await run(staged, ops);
          for (const prefix of ["", "a/", "b/", "c", "z"]) {
            expect(await dump(staged, prefix)).toEqual(await dump(direct, prefix));
            const pages: string[] = [];
            let cursor: string | undefined;
            do {
              const page = await staged.list(prefix, cursor === undefined ? { limit } : { limit, cursor });
              expect(page.entries.length).toBeLessThanOrEqual(limit);
              pages.push(...page.entries.map((e) => e.key));
              cursor = page.cursor;
            } while (cursor !== undefined);
            expect(pages).toEqual((await dump(direct, prefix)).map(([k]) => k));
          }
          for (const key of ["a/1", "a/2", "b/1", "c", "a/10"]) {
            expect(await staged.get(key)).toEqual(await direct.get(key));
          }
          const many = await staged.getMany(["a/1", "b/2", "c", "nope"]);
          expect(many).toEqual(await direct.getMany(["a/1", "b/2", "c", "nope"]));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("leaves the base untouched until commit, then holds what the view held", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { maxLength: 8 }),
        fc.array(opArb, { maxLength: 20 }),
        async (seed, ops) => {
          const base = await seeded(seed);
          const before = await dump(base);
          const staged = createStagedStore(base);
          await run(staged, ops);
          const view = await dump(staged);
          expect(await dump(base)).toEqual(before);
          await staged.commit();
          expect(await dump(base)).toEqual(view);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("compare-and-set decides against the staged state", async () => {
    const base = await seeded(["k"]);
    const staged = createStagedStore(base);
    expect(await staged.put("k", 2, { ifVersion: 1 })).toEqual({ ok: true, version: 2 });
    expect(await staged.put("k", 3, { ifVersion: 1 })).toEqual({
      ok: false,
      current: { key: "k", value: 2, version: 2 },
    });
    expect(await staged.delete("k", { ifVersion: 2 })).toBe(true);
    expect(await staged.put("k", 4, { ifVersion: 0 })).toEqual({ ok: true, version: 1 });
    expect(await base.get("k")).toEqual({ key: "k", value: { base: "k" }, version: 1 });
  });

  it("commits by rank, staging order within a rank, pacing between windows of writes, and only once", async () => {
    const base = createMemoryStore();
    const seen: string[] = [];
    const watched: Store = {
      ...base,
      put: (key, value, options) => {
        seen.push(`put ${key}`);
        return base.put(key, value, options);
      },
      delete: (key, options) => {
        seen.push(`delete ${key}`);
        return base.delete(key, options);
      },
    };
    const staged = createStagedStore(watched);
    await staged.put("push/1", 1);
    await staged.put("obj/1", 1);
    await staged.put("svc/2", 1);
    await staged.put("svc/1", 1);
    await staged.put("gone", 1);
    await staged.delete("gone");
    let paced = 0;
    const rank = (key: string) => (key.startsWith("push/") ? 2 : key.startsWith("obj/") ? 1 : 0);
    expect(await staged.commit({ rank, pace: async () => void paced++ })).toBe(5);
    expect(seen).toEqual(["put svc/2", "put svc/1", "delete gone", "put obj/1", "put push/1"]);
    expect(paced).toBe(4); // once per 1,024 keys while ordering, once per window of writes of a rank (3 ranks)
    await expect(staged.commit()).rejects.toThrow(/committed already/);
    await expect(staged.get("svc/1")).rejects.toThrow(/committed already/);
  });

  it("into a base over the network: up to 16 writes of a rank in flight, a rank only once the one before landed", async () => {
    const base = createMemoryStore();
    let inFlight = 0;
    let most = 0;
    const events: string[] = [];
    const slow: Store = {
      ...base,
      put: async (key, value, options) => {
        inFlight++;
        most = Math.max(most, inFlight);
        events.push(`start ${key.slice(0, 4)}`);
        await new Promise<void>((done) => queueMicrotask(done));
        await Promise.resolve();
        inFlight--;
        events.push(`end ${key.slice(0, 4)}`);
        return base.put(key, value, options);
      },
    };
    const staged = createStagedStore(slow);
    for (let i = 0; i < 40; i++) await staged.put(`svc/${String(i).padStart(2, "0")}`, i);
    await staged.put("obj/1", 1);
    const rank = (key: string) => (key.startsWith("obj/") ? 1 : 0);
    expect(await staged.commit({ rank })).toBe(41);
    expect(most).toBe(16);
    // obj/ started after every svc/ write ended.
    expect(events.indexOf("start obj/")).toBeGreaterThan(events.lastIndexOf("end svc/"));
    expect((await base.get("svc/39"))?.value).toBe(39);
  });

  it("commits into an in-process base in bulk, a slice of writes between paces, versions as put gives", async () => {
    const base = createMemoryStore();
    await base.put("k/0000", "old");
    await base.put("k/0001", "gone");
    const staged = createStagedStore(base);
    for (let i = 0; i < 2500; i++) await staged.put(`k/${String(i).padStart(4, "0")}`, i);
    await staged.delete("k/0001");
    let paced = 0;
    expect(await staged.commit({ pace: async () => void paced++ })).toBe(2500);
    expect(paced).toBe(3 + 3); // once per 1,024 keys while ordering, once per slice of 1,024 writes
    expect(await base.get("k/0000")).toEqual({ key: "k/0000", value: 0, version: 2 });
    expect(await base.get("k/0001")).toBeUndefined();
    expect(await base.get("k/2499")).toEqual({ key: "k/2499", value: 2499, version: 1 });
    expect((await listAll(base, "k/")).length).toBe(2499);
  });

  it("refuses a value the adapters cannot store when it is staged, not when committed", async () => {
    const staged = createStagedStore(createMemoryStore());
    await expect(staged.put("k", { f: () => 1 })).rejects.toThrow();
    expect(staged.staged).toBe(0);
  });

  it("asks the base once for a key it does not hold, and again for a key deleted in the view", async () => {
    const base = await seeded(["held"]);
    const asked: string[] = [];
    const counting: Store = {
      ...base,
      get: (key) => {
        asked.push(key);
        return base.get(key);
      },
      getMany: (keys) => {
        asked.push(...keys);
        return base.getMany(keys);
      },
    };
    const staged = createStagedStore(counting);
    expect(await staged.get("new")).toBeUndefined();
    expect((await staged.getMany(["new", "other"])).size).toBe(0);
    expect(await staged.put("new", 1, { ifVersion: 0 })).toEqual({ ok: true, version: 1 });
    expect(await staged.put("other", 2)).toEqual({ ok: true, version: 1 });
    expect((await staged.get("held"))?.value).toEqual({ base: "held" });
    expect(await staged.delete("held")).toBe(true);
    expect(await staged.put("held", 3, { ifVersion: 0 })).toEqual({ ok: true, version: 1 });
    expect(asked).toEqual(["new", "other", "held", "held"]);
    await staged.commit();
    expect((await base.get("new"))?.value).toBe(1);
    expect((await base.get("held"))?.value).toBe(3);
  });

  it("merges tens of thousands of staged keys into base pages", async () => {
    const base = createMemoryStore();
    for (let i = 0; i < 3000; i += 2) await base.put(`p/${String(i).padStart(6, "0")}`, i);
    const staged = createStagedStore(base);
    for (let i = 1; i < 30000; i += 2) await staged.put(`p/${String(i).padStart(6, "0")}`, i);
    for (let i = 0; i < 3000; i += 4) await staged.delete(`p/${String(i).padStart(6, "0")}`);
    const all = await listAll<number>(staged, "p/");
    const want = [
      ...Array.from({ length: 1500 }, (_, j) => 2 * j).filter((i) => i % 4 !== 0),
      ...Array.from({ length: 15000 }, (_, j) => 2 * j + 1),
    ].sort((a, b) => a - b);
    expect(all.map((e) => e.value)).toEqual(want);
  });
});
