/** The real ingest app (hono, in-process) over a memory store, for tests that post to it and read what it stored and logged. */
import { createIngestApp } from "../../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../../lib/ingest/index.ts";
import { createMemoryStore } from "../../../../lib/store/memory.ts";
import type { Store } from "../../../../lib/store/store.ts";

/** An app for cluster "east", unauthenticated, with a fixed clock; `post` answers status and JSON body. */
export function ingestApp(store: Store = createMemoryStore()) {
  const lines: string[] = [];
  const app = createIngestApp({
    store,
    now: () => 1_700_000_000_000,
    registry: defaultRegistryOptions,
    token: undefined,
    clusterId: "east",
    allowUnauthenticated: () => true,
    log: (line) => lines.push(line),
  });
  const post = async (path: string, body: unknown) => {
    const res = await app.request(path, { method: "POST", body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { app, store, lines, post };
}
