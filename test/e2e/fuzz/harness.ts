/**
 * The real ingest app (createIngestApp) over a memory store seeded with a small valid mesh, with a
 * manual clock and the real debounce turn; `snapshot` is every key and value of the store, so a
 * refused call can be shown to have changed nothing at all (xds/ resources and queued pushes included).
 */
import { createIngestApp } from "../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../../lib/push/run.ts";
import { generators } from "../../../lib/resources/generators/index.ts";
import { encodeValue } from "../../../lib/store/codec.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { listAll } from "../../../lib/store/store.ts";
import { fixtures } from "./arbitraries.ts";

export async function createFuzzMesh() {
  const store = createMemoryStore();
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const logs: string[] = [];
  const app = createIngestApp({
    store,
    now,
    registry: defaultRegistryOptions,
    token: undefined,
    clusterId: "Kubernetes",
    allowUnauthenticated: () => true,
    log: (line) => logs.push(line),
  });
  const post = (path: string, body: string, contentType = "application/json") =>
    app.request(path, { method: "POST", body, headers: { "content-type": contentType } });

  /** Runs the debounce turn with the clock past debounceMax, so everything queued is published. */
  const flush = async () => {
    clock += defaultDebounceOptions.debounceMax + 1;
    await runDebounceTurn(
      {
        store,
        generators,
        context: { domainSuffix: defaultRegistryOptions.domainSuffix },
        now,
      },
      defaultDebounceOptions,
    );
  };

  /** Every key with its encoded value, in key order: byte-identical means equal snapshots. */
  const snapshot = async () =>
    (await listAll(store, ""))
      .map((e) => `${e.key}\u0000${e.version}\u0000${encodeValue(e.value)}`)
      .join("\n");

  const seed = Object.values(fixtures).map((object) => ({ type: "ADDED", object }));
  const seeded = await post("/v1/events", JSON.stringify(seed));
  if (seeded.status !== 200) throw new Error(`seed refused: ${await seeded.text()}`);
  await flush();
  return { app, store, post, flush, snapshot, logs };
}
