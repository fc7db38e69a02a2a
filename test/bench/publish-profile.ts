/**
 * The 10k publish alone (issue 8): ingests a mesh (test/bench/ingest-throughput.ts's events), then
 * times one debounce turn, the flush that publishes everything, and the steady-state flush of one
 * endpoint change. With PUBLISH_CPU_PROFILE=<dir>, writes a CPU profile of the first flush only.
 * `npx tsx test/bench/publish-profile.ts 10000`
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createIngestApp } from "../../functions/ingest.ts";
import { nodeSha256 } from "../../functions/node/sha256.ts";
import { ClusterSchema } from "../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { defaultRegistryOptions } from "../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../lib/push/run.ts";
import { keys, listAll } from "../../lib/store/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { generators } from "../../lib/xds/generators/index.ts";
import type { StoredResource } from "../../lib/xds/types.ts";
import { useSyncSha256 } from "../../lib/xds/version.ts";
import { meshEvents } from "./ingest-throughput.ts";

const services = Number(process.argv[2] ?? 10000);
const profileDir = process.env.PUBLISH_CPU_PROFILE;
useSyncSha256(nodeSha256);
const store = createMemoryStore();
let clock = 1_700_000_000_000;
const now = () => clock;
const app = createIngestApp({
  store,
  now,
  registry: defaultRegistryOptions,
  token: undefined,
  allowUnauthenticated: () => true,
  clusterId: "bench",
  log: () => {},
});
const post = async (events: unknown[]) => {
  const body = events.map((e) => JSON.stringify(e)).join("\n");
  const res = await app.request("/v1/events", {
    method: "POST",
    body,
    headers: { "content-type": "application/x-ndjson" },
  });
  if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
};
for (let at = 0; at < services; at += 250) {
  const events: unknown[] = [];
  for (let n = at; n < Math.min(services, at + 250); n++) events.push(...meshEvents(n, 10));
  await post(events);
}
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const deps = { store, generators, context: { domainSuffix: "cluster.local" }, now };
const turn = async () => {
  clock += defaultDebounceOptions.debounceMax + 1;
  const wall = performance.now();
  const cpu = cpuMs();
  const result = await runDebounceTurn(deps, defaultDebounceOptions);
  const changes = result.flushes.reduce((n, f) => n + f.changes.length, 0);
  return { ms: performance.now() - wall, cpuMs: cpuMs() - cpu, changes };
};
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
// The floor, as ingest-throughput.ts measures it: toBinary of every published resource, best of 3.
const messages: [DescMessage, unknown][] = [];
for (const schema of [ClusterSchema, ClusterLoadAssignmentSchema, ListenerSchema, RouteConfigurationSchema]) {
  for (const e of await listAll<StoredResource>(
    store,
    keys.resourcePrefix(`type.googleapis.com/${schema.typeName}`),
  ))
    messages.push([schema, fromBinary(schema, e.value.body)]);
}
let floorMs = Number.POSITIVE_INFINITY;
for (let pass = 0; pass < 3; pass++) {
  const started = performance.now();
  for (const [schema, message] of messages) toBinary(schema, message as never);
  floorMs = Math.min(floorMs, performance.now() - started);
}
console.log(
  JSON.stringify({
    services,
    first,
    floorMs,
    ratio: first.ms / floorMs,
    steady: steady.map((s) => Math.round(s.ms * 10) / 10),
  }),
);
