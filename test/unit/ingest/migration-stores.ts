/**
 * The stores a layout migration is tested on: the memory store and the file (SQLite) store, each
 * opened fresh per test; file stores are closed and their directories removed after each test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { createIngestCore } from "../../../lib/core/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { createFileStore, type FileStore } from "../../../lib/store/file.ts";
import type { Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

/** `[name, open]` rows for describe.each; `prefix` names the temporary directories. Call at collection time. */
export function migrationStores(prefix: string): [string, () => Store][] {
  const opened: { store: FileStore; dir: string }[] = [];
  afterEach(() => {
    for (const { store, dir } of opened.splice(0)) {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return [
    ["memory", () => createMemoryStore()],
    [
      "file (SQLite)",
      () => {
        const dir = mkdtempSync(join(tmpdir(), prefix));
        const store = createFileStore({ dir });
        opened.push({ store, dir });
        return store;
      },
    ],
  ];
}

/** An ingest of cluster "east" over `store` at a fixed time: validates raw events and applies them as one batch; log lines go to `lines`. */
export function ingestInto(store: Store, lines: string[] = []) {
  const ingest = createIngestCore({
    store,
    now: () => 1_000,
    registry: defaultRegistryOptions,
    log: (line) => lines.push(line),
  });
  return async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    return ingest.events("east", v.value);
  };
}
