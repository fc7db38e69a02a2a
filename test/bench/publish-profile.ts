/**
 * The 10k publish alone: ingests a mesh (test/bench/ingest-throughput.ts's events), then
 * times one debounce turn, the flush that publishes everything, and the steady-state flush of one
 * endpoint change. With PUBLISH_CPU_PROFILE=<dir>, writes a CPU profile of the first flush only.
 * `npx tsx test/bench/publish-profile.ts 10000`
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { createBenchIngest, encodingFloor, meshEvents } from "./ingest-throughput.ts";

const services = Number(process.argv[2] ?? 10000);
const profileDir = process.env.PUBLISH_CPU_PROFILE;
const bench = createBenchIngest();
const post = (events: unknown[]) => bench.post(events.map((e) => JSON.stringify(e)).join("\n"));
for (let at = 0; at < services; at += 250) {
  const events: unknown[] = [];
  for (let n = at; n < Math.min(services, at + 250); n++) events.push(...meshEvents(n, 10));
  await post(events);
}
const turn = () => bench.turn();
const session = profileDir ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
}
const first = await turn();
if (session) {
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(`${profileDir}/publish-${Date.now()}.cpuprofile`, JSON.stringify(profile));
}
// Steady state: one endpoint of one service changes (its slice, readiness flipped).
const steady = [];
for (let i = 0; i < 5; i++) {
  const [, slice] = meshEvents(services >> 1, 10) as [
    unknown,
    { type: string; object: { endpoints: { conditions: { ready: boolean } }[] } },
  ];
  slice.type = "MODIFIED";
  (slice.object.endpoints[0] as { conditions: { ready: boolean } }).conditions.ready = i % 2 === 1;
  await post([slice]);
  steady.push(await turn());
}
const { floorMs } = await encodingFloor(bench.store);
console.log(
  JSON.stringify({
    services,
    first,
    floorMs,
    ratio: first.ms / floorMs,
    steady: steady.map((s) => Math.round(s.ms * 10) / 10),
  }),
);
