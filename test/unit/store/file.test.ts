import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "libsql";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStore, FILE_STORE_NAME, type FileStore, FileStoreError } from "../../../lib/store/file.ts";
import { listAll } from "../../../lib/store/store.ts";
import { COUNT_KEY, record } from "./file-writer.ts";
import { storeCases } from "./store.cases.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const writer = fileURLToPath(new URL("./file-writer.ts", import.meta.url));

const opened: FileStore[] = [];
const dirs: string[] = [];

/** A fresh data directory, removed after the test. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-file-store-"));
  dirs.push(dir);
  return dir;
}

/** Opens a store in `dir`, closed after the test. */
function openStore(dir: string): FileStore {
  const store = createFileStore({ dir });
  opened.push(store);
  return store;
}

afterEach(() => {
  for (const store of opened.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

storeCases("file (SQLite via libsql)", () => openStore(tempDir()));

describe("file store", () => {
  it("creates a missing data directory, nested", async () => {
    const dir = join(tempDir(), "a", "b");
    const store = openStore(dir);
    expect(store.path).toBe(join(dir, FILE_STORE_NAME));
    expect(await store.put("k", 1)).toEqual({ ok: true, version: 1 });
  });

  it("close() leaves every write in the database file alone, with an empty log", async () => {
    const dir = tempDir();
    const store = openStore(dir);
    await store.put("svc/a", { bytes: new Uint8Array([1, 2]) });
    await store.put("svc/a", { bytes: new Uint8Array([3]) });
    await store.put("svc/b", "b");
    store.close();
    store.close();
    expect(statSync(`${store.path}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
    const copy = tempDir();
    copyFileSync(store.path, join(copy, FILE_STORE_NAME));
    const reopened = openStore(copy);
    expect(await listAll(reopened, "svc/")).toEqual([
      { key: "svc/a", value: { bytes: new Uint8Array([3]) }, version: 2 },
      { key: "svc/b", value: "b", version: 1 },
    ]);
  });

  it("refuses every call after close()", async () => {
    const store = openStore(tempDir());
    store.close();
    await expect(store.get("k")).rejects.toThrow(/used after close/);
    await expect(store.put("k", 1)).rejects.toThrow(/used after close/);
  });

  it("refuses a second store on a directory in use", () => {
    const dir = tempDir();
    openStore(dir);
    expect(() => openStore(dir)).toThrow(
      new FileStoreError(`file store: ${join(dir, FILE_STORE_NAME)} is in use by another process`),
    );
  });

  it("names the directory it cannot create, and the file it cannot open", () => {
    const parent = tempDir();
    writeFileSync(join(parent, "file"), "");
    const under = join(parent, "file", "data");
    expect(() => openStore(under)).toThrow(FileStoreError);
    expect(() => openStore(under)).toThrow(`file store: cannot create data directory ${under}: `);
    const garbage = tempDir();
    writeFileSync(
      join(garbage, FILE_STORE_NAME),
      "not a database, and long enough to have a header".repeat(100),
    );
    expect(() => openStore(garbage)).toThrow(`file store: cannot open ${join(garbage, FILE_STORE_NAME)}: `);
  });
});

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

describe("file store durability", () => {
  /** Runs the writer on `dir`, SIGKILLs it once it acknowledged `acks` more records; returns the last acknowledged index. */
  async function writeAndKill(dir: string, acks: number): Promise<number> {
    const child = spawn(process.execPath, ["--import", "tsx", writer, dir], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let seen = 0;
    child.stderr.on("data", (d: Buffer) => {
      err += d;
    });
    child.stdout.on("data", (d: Buffer) => {
      out += d;
      seen += d.toString().split("\n").length - 1;
      if (seen >= acks) child.kill("SIGKILL");
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
      child.once("close", (c, s) => done([c, s])),
    );
    expect({ code, signal, err }).toEqual({ code: null, signal: "SIGKILL", err: "" });
    const lines = out.split("\n").filter(Boolean).map(Number);
    expect(lines.length).toBeGreaterThanOrEqual(acks);
    return lines[lines.length - 1]!;
  }

  /**
   * Checks that a process opening `dir` now finds records 0..n-1, n > last, each whole, and the
   * counter saying n. Reads copies of the files, as the next process would find them, so this
   * process never holds the directory's lock.
   */
  async function expectWhole(dir: string, last: number): Promise<void> {
    const [copy, raw] = [tempDir(), tempDir()];
    cpSync(dir, copy, { recursive: true });
    cpSync(dir, raw, { recursive: true });
    const db = new Database(join(raw, FILE_STORE_NAME));
    expect(db.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    db.close();
    const store = openStore(copy);
    const count = await store.get<number>(COUNT_KEY);
    // The write after the last acknowledged one may have landed too (killed before it printed).
    expect(count?.value).toBeGreaterThan(last);
    expect(count?.value).toBeLessThanOrEqual(last + 2);
    expect(count?.version).toBe(count?.value);
    const records = await listAll<{ i: number; bytes: Uint8Array }>(store, "w/");
    expect(records.length).toBeGreaterThanOrEqual(count!.value);
    expect(records.length).toBeLessThanOrEqual(count!.value + 1);
    // Compared as one list of mismatches: per-element matchers over megabytes are slow.
    const wrong = records.flatMap((entry, i) => {
      const want = record(i);
      const whole =
        entry.key === want.key && entry.value.i === i && sameBytes(entry.value.bytes, want.value.bytes);
      return whole ? [] : [entry.key];
    });
    expect(wrong).toEqual([]);
  }

  it("keeps every acknowledged write, whole, across kill -9 mid-run, twice", async () => {
    const dir = tempDir();
    const first = await writeAndKill(dir, 200 + Math.floor(Math.random() * 200));
    await expectWhole(dir, first);
    // The second writer resumes from the recovered state; the counter's compare-and-set checks it.
    const second = await writeAndKill(dir, 100 + Math.floor(Math.random() * 200));
    expect(second).toBeGreaterThan(first);
    await expectWhole(dir, second);
  }, 30_000);
});
