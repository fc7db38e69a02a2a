/**
 * One ingest batch of N WorkloadEntries selected by one ServiceEntry (memory store): each event
 * updates the External shard from the stored one (lib/ingest/kinds/external-registry.ts) but still
 * lists the namespace's configs, so the batch grows quadratically. `npx tsx test/bench/workload-entry-ingest.ts 1000`.
 */
import { applyEvents, defaultRegistryOptions, validateEvents } from "../../lib/ingest/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { serviceEntry, workloadEntry } from "../unit/ingest/support/istio.ts";

const n = Number(process.argv[2] ?? 1000);
const store = createMemoryStore();
const deps = { store, now: () => 0, registry: defaultRegistryOptions };
const events = [
  { type: "ADDED", object: serviceEntry("pay", { workloadSelector: { labels: { app: "pay" } } }) },
  ...Array.from({ length: n }, (_, i) => ({
    type: "ADDED",
    object: workloadEntry(`w${i}`, {
      address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      labels: { app: "pay" },
    }),
  })),
];
const v = validateEvents(events);
if (!v.ok) throw new Error(JSON.stringify(v.error));
const t = performance.now();
await applyEvents(deps, "east", v.value);
console.log(`${n} WorkloadEntries in one batch: ${(performance.now() - t).toFixed(0)} ms`);
