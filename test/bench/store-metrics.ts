/**
 * What the measuring Store decorator (lib/metrics/store-metrics.ts) adds per call on the memory
 * store, the dearest case relative to the store's own cost: ns per awaited get, raw and measured,
 * alternated in one run. `npx tsx test/bench/store-metrics.ts [calls]`.
 */
import { createRegistry } from "../../lib/metrics/registry.ts";
import { measureStore } from "../../lib/metrics/store-metrics.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import type { Store } from "../../lib/store/store.ts";

async function filled(store: Store): Promise<Store> {
  for (let i = 0; i < 1000; i++) await store.put(`k/${i}`, { i });
  return store;
}

async function nsPerGet(store: Store, calls: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < calls; i++) await store.get(`k/${i % 1000}`);
  return ((performance.now() - t) * 1e6) / calls;
}

/** Medians of `rounds` alternated rounds of `calls` gets each. */
export async function measureStoreMetrics(calls = 300_000, rounds = 5) {
  const raw = await filled(createMemoryStore());
  const measured = await filled(measureStore(createMemoryStore(), createRegistry()));
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    a.push(await nsPerGet(raw, calls));
    b.push(await nsPerGet(measured, calls));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
  return { rawNsPerGet: Math.round(median(a)), measuredNsPerGet: Math.round(median(b)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureStoreMetrics(Number(process.argv[2] ?? 300_000))));
}
