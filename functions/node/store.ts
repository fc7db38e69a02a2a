/** The Node runtime's Store, as the config names it: memory, or the durable file store. */
import type { StoreConfig } from "../../lib/config.ts";
import { createFileStore, FileStoreError } from "../../lib/store/file.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import type { Store } from "../../lib/store/store.ts";

export interface OpenedStore {
  store: Store;
  /** Flushes and closes a file store; nothing to do for memory. */
  close(): void;
}

/**
 * Opens the configured store before anything serves. A data directory that cannot hold the store
 * (not creatable, not writable, not a database, in use by another process) throws an Error that
 * names EDGEPILOT_DATA_DIR and the path, so start-up stops with a line an operator can act on.
 */
export function openStore(config: StoreConfig, log: (line: string) => void): OpenedStore {
  if (config.kind === "memory") return { store: createMemoryStore(), close: () => {} };
  try {
    const store = createFileStore({ dir: config.dataDir });
    log(`edgepilot: store: file ${store.path} (EDGEPILOT_DATA_DIR)`);
    return { store, close: () => store.close() };
  } catch (e) {
    if (e instanceof FileStoreError)
      throw new Error(`EDGEPILOT_DATA_DIR=${config.dataDir}: ${e.message}`, { cause: e });
    throw e;
  }
}
