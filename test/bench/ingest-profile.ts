/**
 * CPU profiles of the 10k ingest and of its publish, apart: ingests the mesh of
 * ingest-throughput.ts in NDJSON batches of 500, then runs the debounce turn that publishes it, each
 * phase under the inspector's profiler (100 µs sampling); writes ingest.cpuprofile and
 * publish.cpuprofile into the directory given (default .) and prints each phase's buckets
 * (cpuprofile.ts). Run compiled, as started (`npx tsc -p tsconfig.bench.json`, then
 * `MALLOC_ARENA_MAX=2 node --max-semi-space-size=8 --no-allocation-site-pretenuring dist-bench/test/bench/ingest-profile.js 10000 /tmp/prof`):
 * tsx's transform changes what is measured.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { type CpuProfile, formatSummary, summarize } from "./cpuprofile.ts";
import { createBenchIngest, ndjsonBatches } from "./ingest-throughput.ts";

const services = Number(process.argv[2] ?? 10000);
const dir = process.argv[3] ?? ".";
const top = Number(process.env.PROFILE_TOP ?? 25);
const bench = createBenchIngest();
const bodies = ndjsonBatches(services, 10, 500);
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });

async function profiled(name: string, phase: () => Promise<void>): Promise<void> {
  await session.post("Profiler.start");
  const started = performance.now();
  await phase();
  const ms = performance.now() - started;
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
  console.log(`${name}: ${ms.toFixed(0)} ms wall`);
  console.log(formatSummary(name, summarize(profile as unknown as CpuProfile), top));
}

await profiled("ingest", async () => {
  for (const { body } of bodies) await bench.post(body);
});
await profiled("publish", async () => {
  await bench.turn();
});
session.disconnect();
