import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStore, type FileStore } from "../../../lib/store/file.ts";
import { storeCases } from "./store.cases.ts";

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
