/**
 * The one case suite for the Store port. Every adapter runs it (memory under Node; the Durable
 * Object over RPC and the SQL store inside the object under workerd), so they stay interchangeable.
 * No case is skipped. Nothing sleeps: concurrency comes from overlapping promises.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setStoreFreezing } from "../../../lib/store/codec.ts";
import { type Entry, listAll, type Store, update, writeAll } from "../../../lib/store/store.ts";

/** Builds a fresh, empty store for one test. */
export type MakeStore = () => Store | Promise<Store>;

const keysOf = (entries: readonly Entry[]) => entries.map((e) => e.key);

/** Writes `{ key }` under each key, all at once (insertion order must not matter to listing). */
async function putAll(store: Store, keys: readonly string[]): Promise<void> {
  const results = await Promise.all(keys.map((key) => store.put(key, { key })));
  expect(results.every((r) => r.ok)).toBe(true);
}

/** Follows cursors with `limit`, checking each page's shape; returns every key seen, in order. */
async function pageThrough(store: Store, prefix: string, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const page = await store.list(prefix, cursor === undefined ? { limit } : { limit, cursor });
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    seen.push(...keysOf(page.entries));
    if (page.cursor === undefined) return seen;
    expect(page.entries.length, "a page that promises more is not empty").toBeGreaterThan(0);
    expect(pages, "paging terminates").toBeLessThan(1000);
    cursor = page.cursor;
  }
}

/** Defines the Store port's cases against stores made by `makeStore`. */
export function storeCases(name: string, makeStore: MakeStore): void {
  describe(`Store: ${name}`, () => {
    let store: Store;
    // The contracts are pinned as tests see them: in-process stores freeze what they keep (workerd
    // sets no VITEST or NODE_ENV, so it is turned on here for every runtime).
    let wasFreezing = false;
    beforeAll(() => {
      wasFreezing = setStoreFreezing(true);
    });
    afterAll(() => {
      setStoreFreezing(wasFreezing);
    });
    beforeEach(async () => {
      store = await makeStore();
    });

    describe("get, put, versions", () => {
      it("a missing key reads as undefined", async () => {
        expect(await store.get("nope")).toBeUndefined();
      });

      it("versions start at 1 and grow by one per write, per key", async () => {
        expect(await store.put("k", { n: 1 })).toEqual({ ok: true, version: 1 });
        expect(await store.put("k", { n: 2 })).toEqual({ ok: true, version: 2 });
        expect(await store.put("other", "x")).toEqual({ ok: true, version: 1 });
        expect(await store.put("k", { n: 3 })).toEqual({ ok: true, version: 3 });
        expect(await store.get("k")).toEqual({ key: "k", value: { n: 3 }, version: 3 });
        expect(await store.get("other")).toEqual({ key: "other", value: "x", version: 1 });
      });

      it("a key created again after a delete starts at version 1", async () => {
        await store.put("k", 1);
        await store.put("k", 2);
        expect(await store.delete("k")).toBe(true);
        expect(await store.put("k", 3, { ifVersion: 0 })).toEqual({ ok: true, version: 1 });
      });
    });

    describe("compare-and-set", () => {
      it("ifVersion 0 creates a missing key", async () => {
        expect(await store.put("k", "first", { ifVersion: 0 })).toEqual({ ok: true, version: 1 });
        expect(await store.get("k")).toEqual({ key: "k", value: "first", version: 1 });
      });

      it("ifVersion 0 refuses an existing key and returns it", async () => {
        await store.put("k", "first");
        const result = await store.put("k", "second", { ifVersion: 0 });
        expect(result).toEqual({ ok: false, current: { key: "k", value: "first", version: 1 } });
        expect(await store.get("k")).toEqual({ key: "k", value: "first", version: 1 });
      });

      it("writes when ifVersion is the current version", async () => {
        await store.put("k", "a");
        await store.put("k", "b");
        expect(await store.put("k", "c", { ifVersion: 2 })).toEqual({ ok: true, version: 3 });
        expect((await store.get("k"))?.value).toBe("c");
      });

      it("refuses a stale ifVersion, returns the current entry and changes nothing", async () => {
        await store.put("k", "a");
        await store.put("k", "b");
        const result = await store.put("k", "late", { ifVersion: 1 });
        expect(result).toEqual({ ok: false, current: { key: "k", value: "b", version: 2 } });
        expect(await store.get("k")).toEqual({ key: "k", value: "b", version: 2 });
      });

      it("refuses ifVersion > 0 for a missing key, with no current entry", async () => {
        expect(await store.put("k", "x", { ifVersion: 1 })).toEqual({ ok: false, current: undefined });
        expect(await store.get("k")).toBeUndefined();
      });
    });

    describe("delete", () => {
      it("deletes an existing key once", async () => {
        await store.put("k", 1);
        expect(await store.delete("k")).toBe(true);
        expect(await store.get("k")).toBeUndefined();
        expect(await store.delete("k")).toBe(false);
      });

      it("reports false for a missing key, with or without ifVersion", async () => {
        expect(await store.delete("nope")).toBe(false);
        expect(await store.delete("nope", { ifVersion: 1 })).toBe(false);
      });

      it("with ifVersion deletes only the version it names", async () => {
        await store.put("k", 1);
        await store.put("k", 2);
        expect(await store.delete("k", { ifVersion: 1 })).toBe(false);
        expect(await store.get("k")).toEqual({ key: "k", value: 2, version: 2 });
        expect(await store.delete("k", { ifVersion: 2 })).toBe(true);
        expect(await store.get("k")).toBeUndefined();
      });
    });

    describe("getMany", () => {
      it("returns the keys that exist and leaves missing ones out", async () => {
        await store.put("a", "A");
        await store.put("c", "C");
        await store.put("c", "C2");
        const got = await store.getMany(["a", "b", "c", "a"]);
        expect([...got.keys()].sort()).toEqual(["a", "c"]);
        expect(got.get("a")).toEqual({ key: "a", value: "A", version: 1 });
        expect(got.get("c")).toEqual({ key: "c", value: "C2", version: 2 });
        expect((await store.getMany([])).size).toBe(0);
        expect((await store.getMany(["x", "y"])).size).toBe(0);
      });

      it("handles more keys than one query holds", async () => {
        const keys = Array.from({ length: 150 }, (_, i) => `m/${String(i).padStart(3, "0")}`);
        await putAll(
          store,
          keys.filter((_, i) => i % 3 !== 0),
        );
        const got = await store.getMany(keys);
        expect(got.size).toBe(100);
        for (const [i, key] of keys.entries())
          expect(got.get(key)?.value, key).toEqual(i % 3 ? { key } : undefined);
      });
    });

    describe("list", () => {
      it("returns exactly the keys under a prefix, ascending by code point", async () => {
        const inside = ["a/", "a/b", "a/b/c", "a/~", "a/\u007f", "a/\u00e9", "a/\uffff", "a/\u{1f600}"];
        const outside = ["a", "a0", "a.", "a-", "A/x", "b", "b/a/", "p%_/1", "pxy/1", "", "\u{1f600}"];
        await putAll(store, [...outside, ...inside].reverse());
        expect(keysOf((await store.list("a/")).entries)).toEqual(inside);
        expect(await pageThrough(store, "a/", 1)).toEqual(inside);
        expect(keysOf((await store.list("p%_/")).entries)).toEqual(["p%_/1"]);
        expect(keysOf((await store.list("b/a")).entries)).toEqual(["b/a/"]);
      });

      it("bounds prefixes that end in high code points", async () => {
        const keys = [
          "g\ud7ff",
          "g\ud7ff\u{10000}",
          "g\ue000",
          "g\u{10000}",
          "h\ufffe",
          "h\uffff",
          "h\uffff/x",
        ];
        const more = ["h\u{10000}", "h\u{10ffff}", "h\u{10ffff}\u{10ffff}z", "h\u{10ffff}z", "i"];
        await putAll(store, [...keys, ...more].reverse());
        expect(keysOf((await store.list("g\ud7ff")).entries)).toEqual(["g\ud7ff", "g\ud7ff\u{10000}"]);
        expect(keysOf((await store.list("h\uffff")).entries)).toEqual(["h\uffff", "h\uffff/x"]);
        const top = ["h\u{10ffff}", "h\u{10ffff}z", "h\u{10ffff}\u{10ffff}z"];
        expect(keysOf((await store.list("h\u{10ffff}")).entries)).toEqual(top);
        const h = ["h\ufffe", "h\uffff", "h\uffff/x", "h\u{10000}", ...top];
        expect(keysOf((await store.list("h")).entries)).toEqual(h);
        expect(await pageThrough(store, "h", 2)).toEqual(h);
      });

      it("lists every key for the empty prefix and nothing for an unused one", async () => {
        await putAll(store, ["b", "a/1", "c/\u00e9"]);
        expect(await store.list("")).toEqual({
          entries: [
            { key: "a/1", value: { key: "a/1" }, version: 1 },
            { key: "b", value: { key: "b" }, version: 1 },
            { key: "c/\u00e9", value: { key: "c/\u00e9" }, version: 1 },
          ],
        });
        expect(await store.list("zz/")).toEqual({ entries: [] });
      });

      it("pages through cursors with any limit and returns each key once", async () => {
        const keys = Array.from({ length: 25 }, (_, i) => `p/${String(i).padStart(2, "0")}`);
        await putAll(store, ["p", "p0", "o/1", "q/1", ...[...keys].reverse()]);
        for (const limit of [1, 2, 3, 7, 24, 25, 26, 1000]) {
          expect(await pageThrough(store, "p/", limit), `limit ${limit}`).toEqual(keys);
        }
        const first = await store.list("p/", { limit: 10 });
        expect(keysOf(first.entries)).toEqual(keys.slice(0, 10));
        expect(first.cursor).toBeDefined();
      });

      it("resumes after a cursor whose key was deleted in between", async () => {
        await putAll(store, ["r/1", "r/2", "r/3", "r/4"]);
        const first = await store.list("r/", { limit: 2 });
        expect(keysOf(first.entries)).toEqual(["r/1", "r/2"]);
        await store.delete("r/2");
        const rest = await store.list("r/", { limit: 2, cursor: first.cursor! });
        expect(keysOf(rest.entries)).toEqual(["r/3", "r/4"]);
      });

      it("refuses a limit that is not a positive integer", async () => {
        for (const limit of [0, -1, 1.5]) await expect(store.list("", { limit })).rejects.toThrow(/limit/);
      });
    });

    describe("listAll and update", () => {
      it("listAll follows cursors past the default page", async () => {
        const keys = Array.from({ length: 1003 }, (_, i) => `l/${String(i).padStart(4, "0")}`);
        await putAll(store, keys);
        await store.put("l", "outside");
        expect(keysOf(await listAll(store, "l/"))).toEqual(keys);
        // With a pace, the same entries, and the pace awaited between pages (not one long step).
        let paces = 0;
        expect(keysOf(await listAll(store, "l/", async () => void paces++))).toEqual(keys);
        expect(paces).toBeGreaterThan(0);
      });

      it("update creates, then changes from the current entry", async () => {
        const seen: (Entry<number> | undefined)[] = [];
        const bump = (cur: Entry<number> | undefined) => {
          seen.push(cur);
          return (cur?.value ?? 0) + 10;
        };
        expect(await update<number>(store, "u", bump)).toBe(10);
        expect(await update<number>(store, "u", bump)).toBe(20);
        expect(seen).toEqual([undefined, { key: "u", value: 10, version: 1 }]);
        expect(await store.get("u")).toEqual({ key: "u", value: 20, version: 2 });
      });

      it("update returning undefined leaves the key alone", async () => {
        await store.put("u", "kept");
        expect(await update(store, "u", () => undefined)).toBeUndefined();
        expect(await store.get("u")).toEqual({ key: "u", value: "kept", version: 1 });
        expect(await update(store, "missing", () => undefined)).toBeUndefined();
        expect(await store.get("missing")).toBeUndefined();
      });

      it("update returning null deletes the key, or does nothing when it is missing", async () => {
        await store.put("u", "gone");
        expect(await update(store, "u", () => null)).toBeNull();
        expect(await store.get("u")).toBeUndefined();
        expect(await update(store, "u", () => null)).toBeNull();
        expect(await store.get("u")).toBeUndefined();
      });

      it("writeAll puts and deletes in order, with the versions put and delete give", async () => {
        await store.put("w/a", "a1");
        await store.put("w/gone", "x");
        await writeAll(store, [
          { key: "w/a", value: "a2" },
          { key: "w/b", value: { n: 1 } },
          { key: "w/gone", deleted: true },
          { key: "w/b", value: { n: 2 } },
          { key: "w/missing", deleted: true },
        ]);
        expect(await listAll(store, "w/")).toEqual([
          { key: "w/a", value: "a2", version: 2 },
          { key: "w/b", value: { n: 2 }, version: 2 },
        ]);
        expect(await store.put("w/b", { n: 3 }, { ifVersion: 2 })).toEqual({ ok: true, version: 3 });
      });

      it("writeAll refuses what put refuses", async () => {
        await expect(writeAll(store, [{ key: "w/bad", value: new Map() }])).rejects.toThrow(TypeError);
        expect(await store.get("w/bad")).toBeUndefined();
      });
    });

    describe("values", () => {
      it("are owned once put: mutating one throws (kept and frozen) or changes nothing stored (encoded)", async () => {
        const value = { list: [1, 2], nested: { s: "a" } };
        await store.put("v", value);
        const attempts = [() => value.list.push(3), () => Object.assign(value.nested, { s: "changed" })];
        for (const mutate of attempts) {
          try {
            mutate();
          } catch (e) {
            expect(e).toBeInstanceOf(TypeError);
          }
        }
        expect((await store.get<typeof value>("v"))?.value).toEqual({ list: [1, 2], nested: { s: "a" } });
      });

      it("are read-only when read: a mutation throws (shared, frozen) or changes nothing stored (a fresh copy)", async () => {
        const want = { list: [1, 2], nested: { s: "a" } };
        await store.put("v", { list: [1, 2], nested: { s: "a" } });
        const read = (await store.get<typeof want>("v"))!;
        const attempts: (() => void)[] = [
          () => read.value.list.push(4),
          () => {
            (read as { version: number }).version = 99;
          },
          () => {
            read!.value.nested.s = "via get";
          },
        ];
        for (const mutate of attempts) {
          try {
            mutate();
          } catch (e) {
            expect(e).toBeInstanceOf(TypeError);
          }
        }
        const viaMany = async () => {
          (await store.getMany<typeof want>(["v"])).get("v")!.value.nested.s = "via getMany";
        };
        const viaList = async () => {
          (await store.list<typeof want>("v")).entries[0]!.value.list.length = 0;
        };
        for (const mutate of [viaMany, viaList])
          await mutate().catch((e) => expect(e).toBeInstanceOf(TypeError));
        expect(await store.get("v")).toEqual({ key: "v", value: want, version: 1 });
      });

      it("round-trip JSON data and Uint8Array nested anywhere, including $-keys", async () => {
        const all = Uint8Array.from({ length: 256 }, (_, i) => i);
        const value = {
          s: "h\u00e9llo \u{1f600}",
          n: [0, -1, 1.5, 2 ** 53 - 1, -0.25],
          b: [true, false, null],
          empty: { o: {}, a: [], bytes: new Uint8Array(0) },
          deep: { a: [{ bytes: all }, [new Uint8Array([7])]] },
          view: new Uint8Array(all.buffer, 250, 3),
          $bytes: "AAAA",
          lookalike: { $bytes: "AAAA" },
          $$bytes: { $x: 1 },
        };
        await store.put("v", value);
        const got = (await store.get<typeof value>("v"))!.value;
        expect(got).toStrictEqual({ ...value, view: new Uint8Array([250, 251, 252]) });
        expect(got.deep.a[0]).toStrictEqual({ bytes: all });
        expect(got.lookalike).not.toBeInstanceOf(Uint8Array);
        await store.put("raw", new Uint8Array([1, 2, 3]));
        expect((await store.get("raw"))?.value).toStrictEqual(new Uint8Array([1, 2, 3]));
      });

      it("refuses what is not plain data and writes nothing", async () => {
        class Point {
          x = 1;
        }
        const bad: unknown[] = [
          undefined,
          Number.NaN,
          Infinity,
          1n,
          () => 1,
          new Date(0),
          new Map(),
          new Point(),
        ];
        bad.push({ deep: [1, undefined] }, { deep: { at: new Set() } });
        for (const value of bad) {
          await expect(store.put("bad", value), String(value)).rejects.toThrow(TypeError);
        }
        expect(await store.get("bad")).toBeUndefined();
      });
    });

    describe("concurrency", () => {
      it("concurrent update() increments of one counter all land", async () => {
        const n = 20;
        // Worst case every round has one winner, so allow n attempts (update's default is 16).
        const inc = () => update<number>(store, "counter", (cur) => (cur?.value ?? 0) + 1, n + 1);
        const results = await Promise.all(Array.from({ length: n }, inc));
        expect([...results].sort((a, b) => a! - b!)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        expect(await store.get("counter")).toEqual({ key: "counter", value: n, version: n });
      });

      it("concurrent create-only puts of one key have exactly one winner", async () => {
        const n = 20;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => store.put("once", { writer: i }, { ifVersion: 0 })),
        );
        const winners = results.flatMap((r, i) => (r.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        const stored = { key: "once", value: { writer: winners[0] }, version: 1 };
        expect(await store.get("once")).toEqual(stored);
        for (const r of results) if (!r.ok) expect(r.current).toEqual(stored);
      });
    });
  });
}
