/**
 * The SQLite store's pages are bounded in size as well as in count: a list call decodes about
 * MAX_PAGE_CHARS of values at most (the Durable Object's 128 MB is for everything), yet paging
 * always moves and returns every key once, in order. Run on the file store (the same sql.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStore, type FileStore } from "../../../lib/store/file.ts";
import { MAX_PAGE_CHARS } from "../../../lib/store/sql.ts";
import { listAll } from "../../../lib/store/store.ts";

const opened: { store: FileStore; dir: string }[] = [];

function openStore(): FileStore {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-sql-pages-"));
  const store = createFileStore({ dir });
  opened.push({ store, dir });
  return store;
}

afterEach(() => {
  for (const { store, dir } of opened.splice(0)) {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `count` values of about `chars` characters each under `prefix`. */
async function fill(store: FileStore, prefix: string, count: number, chars: number): Promise<string[]> {
  const keys = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);
  for (const key of keys) await store.put(key, "x".repeat(chars));
  return keys;
}

describe("sql store pages", () => {
  it.each([
    { what: "small values: the count limit ends pages", count: 30, chars: 10, limit: 7, firstPage: 7 },
    { what: "large values: the size bound ends pages", count: 6, chars: 400_000, limit: 1000, firstPage: 3 },
    {
      what: "a value over the bound comes alone",
      count: 3,
      chars: MAX_PAGE_CHARS + 10,
      limit: 1000,
      firstPage: 1,
    },
  ])("$what", async ({ count, chars, limit, firstPage }) => {
    const store = openStore();
    const keys = await fill(store, "p/", count, chars);
    await store.put("q/after", "not listed");
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list<string>("p/", cursor === undefined ? { limit } : { limit, cursor });
      if (pages === 0) expect(page.entries).toHaveLength(firstPage);
      const size = page.entries.reduce((n, e) => n + e.key.length + e.value.length, 0);
      const last = page.entries[page.entries.length - 1]!;
      expect(page.entries.length).toBeLessThanOrEqual(limit);
      // Never more than the bound plus the one entry that crossed it.
      expect(size - last.key.length - last.value.length).toBeLessThan(MAX_PAGE_CHARS);
      seen.push(...page.entries.map((e) => e.key));
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(keys);
    expect((await listAll(store, "p/")).map((e) => e.key)).toEqual(keys);
  });
});
