/**
 * `npm run bench`: what edgepilot costs, measured on this machine. Bytes are exact and repeatable;
 * milliseconds are medians and depend on the machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileStore } from "../../lib/store/file.ts";
import type { Store } from "../../lib/store/store.ts";
import { measureAgentLatency } from "./agent-latency.ts";
import { measureUpstreamBytes, printUpstreamBytes } from "./agent-upstream-bytes.ts";
import { measureAwsUnits, printAwsCost } from "./aws-cost.ts";
import { measureCaSign, printCaSign } from "./ca-sign.ts";
import { measureDoCalls } from "./do-calls.ts";
import { measureCapacity } from "./do-capacity.ts";
import { measureDynamo, printDynamo } from "./dynamodb.ts";
import { type FanoutReport, measureFanoutAlone, warmupChanges } from "./fanout.ts";
import { printIngestStall } from "./ingest-stall.ts";
import { measureThroughputAsStarted } from "./ingest-throughput.ts";
import { measureJwtVerify, printJwtVerify } from "./jwt-verify.ts";
import { measureLambdaColdStart } from "./lambda-cold-start.ts";
import { grpcDefaultLimit, measureLargestMessage } from "./largest-message.ts";
import { type MemorySample, measureMemory } from "./memory.ts";
import { buildMesh, sliceEvent } from "./mesh.ts";
import { measureNetworkViews } from "./network-views.ts";
import { measureSessionPush } from "./session-push.ts";
import { measureSidecarInitial } from "./sidecar-initial.ts";
import { measureSidecarShare } from "./sidecar-share.ts";
import { compareStores } from "./store.ts";
import { measureVsHostIndex } from "./vs-host-index.ts";
import { measureBytes } from "./xds-bytes.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function pushLatency(services: number, runs: number, store?: Store) {
  const started = performance.now();
  const mesh = await buildMesh(services, store);
  const buildMs = performance.now() - started;
  const target = Math.floor(services / 2);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const ip = `10.200.${i % 250}.${(i % 200) + 1}`;
    times.push((await mesh.ingestAndPush([sliceEvent(target, [ip], "MODIFIED")])).ms);
  }
  return { services, buildMs, medianMs: median(times), maxMs: Math.max(...times) };
}

const pad = (v: string | number, n: number) => String(v).padStart(n);
const sizes = [100, 1000];

/** The targets, each with the figure measured below and the floor measured beside it. */
const targets: { figure: string; target: string; measured: string; floor: string; met: boolean }[] = [];

console.log("xDS bytes sent to one proxy watching every service (CDS wildcard; EDS, LDS, RDS by name)");
console.log("services | change                   | SotW bytes (msgs) | Delta bytes (msgs)");
for (const n of sizes) {
  const r = await measureBytes(n);
  const row = (
    what: string,
    s: { bytes: number; responses: number },
    d: { bytes: number; responses: number },
  ) =>
    console.log(
      `${pad(n, 8)} | ${what.padEnd(24)} | ${pad(`${s.bytes} (${s.responses})`, 17)} | ${pad(`${d.bytes} (${d.responses})`, 18)}`,
    );
  row("first subscription", r.initial.sotw, r.initial.delta);
  row("one endpoint moved", r.endpointMoved.sotw, r.endpointMoved.delta);
  row("  same, SotW full EDS", r.endpointMoved.sotwFullEds, r.endpointMoved.delta);
  row("one service added", r.serviceAdded.sotw, r.serviceAdded.delta);
}

console.log(
  "\nagent upstream bytes for one endpoint change: Delta ADS vs Connect Watch vs long-polled Poll, one Node" +
    " edgepilot, counted at the socket (a TCP proxy); one local proxy on the agent (CDS wildcard + every EDS)",
);
for (const n of [1, 100]) printUpstreamBytes(await measureUpstreamBytes(n));

console.log(
  "\nthe AWS host: DynamoDB request units per event, per push and per Watch stream, and list-price dollars" +
    " (test/bench/aws-cost.ts; README: What it costs)",
);
printAwsCost(await measureAwsUnits(100, 50));

console.log(
  "\ningest ▶ published push of one EndpointSlice change (memory store; the debounce wait is not counted)",
);
console.log("services | build mesh ms | median ms | max ms (20 runs)");
for (const n of sizes) {
  const r = await pushLatency(n, 20);
  console.log(
    `${pad(n, 8)} | ${pad(r.buildMs.toFixed(0), 12)} | ${pad(r.medianMs.toFixed(2), 9)} | ${pad(r.maxMs.toFixed(2), 6)}`,
  );
}

console.log("\nthe same on the file store (EDGEPILOT_STORE=file)");
console.log("services | build mesh ms | median ms | max ms (20 runs)");
for (const n of sizes) {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-bench-"));
  const store = createFileStore({ dir });
  try {
    const r = await pushLatency(n, 20, store);
    console.log(
      `${pad(n, 8)} | ${pad(r.buildMs.toFixed(0), 12)} | ${pad(r.medianMs.toFixed(2), 9)} | ${pad(r.maxMs.toFixed(2), 6)}`,
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  "\nDynamoDB (EDGEPILOT_STORE=dynamodb) over dynalite in this process, beside the memory store: calls, items and" +
    " request units per ingested event and per push (50 services, 5 events each, one batch; then one EndpointSlice" +
    " change at a time), and ingest ▶ published push (dynalite's latency, not AWS's)",
);
printDynamo(await measureDynamo(50, 10));

console.log(
  "\nEnvoy sidecar resources (lib/xds/sidecar-snapshots.ts, memory store, one namespace): the first sidecar's" +
    " CDS+LDS+RDS built from the store, a replica's (shared), and the distinct resources 1,000 sidecars of 100" +
    " deployments are served against what they hold in all",
);
console.log(
  "services | first ms | bytes | resources | replica ms | sidecars | classes out/in | distinct | distinct/held",
);
{
  const r = await measureSidecarShare(1000, 1000, 100);
  console.log(
    `${pad(r.services, 8)} | ${pad(r.firstMs, 8)} | ${pad(r.firstBytes, 5)} | ${pad(r.resourcesPerProxy, 9)} | ${pad(r.sharedMs, 10)} | ${pad(r.proxies, 8)} | ${pad(`${r.outboundClasses}/${r.inboundClasses}`, 14)} | ${pad(r.distinctResources, 8)} | ${r.ratio}`,
  );
}

console.log(
  "\nInitial push to one Envoy sidecar over Delta ADS (server as npm start runs it, 1,000 services ingested;" +
    " CDS+LDS wildcard, then EDS and RDS for every name, each response ACKed), beside a proxyless gRPC client" +
    " subscribed to the whole mesh on the same server",
);
console.log("proxy     |      ms |   bytes | responses | clusters | assignments | listeners | routes");
{
  const r = await measureSidecarInitial(1000);
  for (const [what, p] of [
    ["sidecar", r.sidecar],
    ["proxyless", r.proxyless],
  ] as const)
    console.log(
      `${what.padEnd(9)} | ${pad(p.ms, 7)} | ${pad(p.bytes, 7)} | ${pad(p.responses, 9)} | ${pad(p.resources.clusters, 8)} | ${pad(p.resources.endpoints, 11)} | ${pad(p.resources.listeners, 9)} | ${pad(p.resources.routes, 6)}`,
    );
}

console.log(
  "\nstore throughput: 10k services + 10k slices (operations per second; list: entries per second)",
);
console.log("store  |   keys | create |  update |     get | getMany |    list");
for (const r of await compareStores(10_000)) {
  console.log(
    `${r.store.padEnd(6)} | ${pad(r.keys, 6)} | ${pad(r.create, 6)} | ${pad(r.update, 7)} | ${pad(r.get, 7)} | ${pad(r.getMany, 7)} | ${pad(r.list, 7)}`,
  );
}

await printIngestStall(100_000);

console.log(
  "\nfan-out: one endpoint change to N Delta streams (the Node runtime in a fresh process of its own, real ingest POST, real" +
    " gRPC clients in a child process that also POSTs each change; PILOT_ENABLE_EDS_DEBOUNCE=false; each change once" +
    ` the previous one's ACKs drained; ${warmupChanges} warm-up changes, then 20 measured; "first" is the CPU of the warm-up's,` +
    " the first the process served, which also pay its one-time costs: V8 compiling the hot paths)",
);
console.log(
  "streams | what                | last stream has it p50 ms (target) | p99 ms (target) | server CPU µs/stream/push (target) | first | POST ms",
);
const fanout: Record<string, FanoutReport> = {};
for (const n of [0, 100, 1000]) {
  // The transport floor beside each measured row: the same clients and changes against bare
  // node:http2 writing the same response bytes (fanout-floor.ts), run right after.
  for (const floor of n === 0 ? [false] : [false, true]) {
    const r = measureFanoutAlone(n, floor);
    fanout[`${n}${floor ? "/floor" : ""}`] = r;
    const target = (v: number) => (n === 1000 && !floor ? ` (≤ ${v})` : "");
    const dash = (v: string) => (n === 0 ? "-" : v);
    const what = floor ? "floor: node:http2" : "edgepilot";
    console.log(
      `${pad(n, 7)} | ${what.padEnd(19)} | ${pad(dash(`${r.p50Ms.toFixed(0)}${target(150)}`), 34)} | ${pad(dash(`${r.p99Ms.toFixed(0)}${target(300)}`), 15)} | ${pad(dash(`${r.cpuPerStreamUs.toFixed(0)}${target(50)}`), 34)} | ${pad(dash(r.coldCpuPerStreamUs.toFixed(0)), 5)} | ${pad(r.postMs.toFixed(1), 7)}`,
    );
  }
}
console.log("(target: POST ms independent of the number of streams)");
{
  const [r, f, none] = [fanout["1000"], fanout["1000/floor"], fanout["0"]] as [
    FanoutReport,
    FanoutReport,
    FanoutReport,
  ];
  targets.push(
    {
      figure: "1,000 Delta streams: last stream has it p50 / p99",
      target: "≤ 150 / ≤ 300 ms",
      measured: `${r.p50Ms.toFixed(0)} / ${r.p99Ms.toFixed(0)} ms`,
      floor: `${f.p50Ms.toFixed(0)} / ${f.p99Ms.toFixed(0)} ms (node:http2)`,
      met: r.p50Ms <= 150 && r.p99Ms <= 300,
    },
    {
      figure: "1,000 Delta streams: server CPU per stream per push",
      target: "≤ 50 µs",
      measured: `${r.cpuPerStreamUs.toFixed(1)} µs (first ${warmupChanges} changes: ${r.coldCpuPerStreamUs.toFixed(1)})`,
      floor: `${f.cpuPerStreamUs.toFixed(1)} µs (node:http2; first ${warmupChanges}: ${f.coldCpuPerStreamUs.toFixed(1)})`,
      met: r.cpuPerStreamUs <= 50,
    },
    {
      figure: "ingest POST latency, 1,000 streams vs none",
      target: "independent of streams",
      measured: `${r.postMs.toFixed(1)} ms vs ${none.postMs.toFixed(1)} ms`,
      floor: `${f.postMs.toFixed(1)} ms (node:http2, 1,000 streams)`,
      // Within 2 ms or 50% of the POST with no stream: fan-out is not on the request path.
      met: r.postMs <= Math.max(none.postMs * 1.5, none.postMs + 2),
    },
  );
}

console.log(
  "\nthe agent: one endpoint change through `edgepilot agent` (its own process, as `npm run agent`) beside the same" +
    " change direct to the Node edgepilot (its own process, as `npm start`); real Delta ADS clients in a third process" +
    " POST each change; time to the LAST stream holding the new ClusterLoadAssignment; agent and direct alternating," +
    " 20 changes each; CPU: process.cpuUsage per change",
);
console.log(
  "streams | path   | last stream has it p50 ms | p99 ms | agent adds p50/p99 ms | agent CPU µs/change | server CPU µs/change | POST ms",
);
{
  const r = await measureAgentLatency(20);
  for (const row of r.rows) {
    const direct = r.rows.find((d) => d.streams === row.streams && d.path === "direct");
    const adds =
      row.path === "agent" && direct
        ? `${(row.p50Ms - direct.p50Ms).toFixed(1)}/${(row.p99Ms - direct.p99Ms).toFixed(1)}`
        : "(floor)";
    console.log(
      `${pad(row.streams, 7)} | ${row.path.padEnd(6)} | ${pad(row.p50Ms.toFixed(1), 25)} | ${pad(row.p99Ms.toFixed(1), 6)} | ${pad(adds, 21)} | ${pad(row.path === "agent" ? row.agentCpuUs.toFixed(0) : "-", 19)} | ${pad(row.serverCpuUs.toFixed(0), 20)} | ${pad(row.postMs.toFixed(1), 7)}`,
    );
  }
  const m = r.memory;
  console.log(
    `agent memory after a full GC: idle RSS ${m.idle.rssMb.toFixed(0)} MB (heap ${m.idle.heapUsedMb.toFixed(1)} MB); with 100 local` +
      ` streams RSS ${m.streams100.rssMb.toFixed(0)} MB (heap ${m.streams100.heapUsedMb.toFixed(1)} MB)`,
  );
}

console.log(
  "\nmemory of the server process (its own node --expose-gc process, after a full GC): 10k Services + 10k" +
    " EndpointSlices × 10 endpoints, then 1,000 Delta streams (clients in a child process), 100 endpoint pushes",
);
console.log("when                 | RSS MB (target ≤ 300) | heapUsed MB | heapTotal MB | external MB");
{
  const r = measureMemory();
  const row = (what: string, m: MemorySample) =>
    console.log(
      `${what.padEnd(20)} | ${pad(m.rssMb.toFixed(0), 21)} | ${pad(m.heapUsedMb.toFixed(1), 11)} | ${pad(m.heapTotalMb.toFixed(1), 12)} | ${pad(m.externalMb.toFixed(1), 11)}`,
    );
  row("mesh, no stream", r.mesh);
  row("push 10", r.push10);
  row("push 100", r.push100);
  const growth = r.push100.rssMb - r.push10.rssMb;
  console.log(
    `growth push 10 ▶ 100: RSS ${growth.toFixed(1)} MB, heapUsed ${(r.push100.heapUsedMb - r.push10.heapUsedMb).toFixed(1)} MB (target: none)`,
  );
  const peak = Math.max(r.mesh.rssMb, r.push10.rssMb, r.push100.rssMb);
  targets.push(
    {
      figure: "memory, 10k services × 10 endpoints + 1,000 streams",
      target: "≤ 300 MB RSS",
      measured: `${r.mesh.rssMb.toFixed(0)} / ${r.push10.rssMb.toFixed(0)} / ${r.push100.rssMb.toFixed(0)} MB (mesh / push 10 / push 100)`,
      floor: `heap used ${r.push100.heapUsedMb.toFixed(0)} MB at push 100`,
      met: peak <= 300,
    },
    {
      figure: "memory growth, push 10 ▶ push 100",
      target: "none (≤ 5%)",
      measured: `RSS ${growth >= 0 ? "+" : ""}${growth.toFixed(0)} MB, heap ${(r.push100.heapUsedMb - r.push10.heapUsedMb).toFixed(1)} MB`,
      floor: "-",
      met: growth <= r.push10.rssMb * 0.05,
    },
  );
}

console.log(
  "\none endpoint change inside Delta sessions (lib/xds/delta.ts, memory store, no transport): ingest + flush +" +
    " every session's push and ACK, median of 100; change-aware (the push names what changed) vs full re-diff",
);
console.log(
  "services | case                       | change-aware ms | full re-diff ms | sessions' part ms | CPU µs/stream/push (target ≤ 50)",
);
const cases: Record<string, { ms: number }> = {};
for (const n of [100, 10_000]) {
  const mesh = await buildMesh(n);
  const all = Array.from({ length: n }, (_, i) => i);
  const rows = [
    ["focused (3 services)", 1, () => [0, 1, 2]],
    ["whole mesh (every EDS)", 1, () => all],
    ["1,000 streams, 2 each", 1000, (s: number) => [0, 1 + (s % (n - 1))]],
  ] as const;
  for (const [what, streams, names] of rows) {
    const r = await measureSessionPush(n, streams, names, 100, mesh);
    cases[`${what}/${n}`] = { ms: r.changeAwareMs };
    console.log(
      `${pad(n, 8)} | ${what.padEnd(26)} | ${pad(r.changeAwareMs.toFixed(2), 15)} | ${pad(r.fullRediffMs.toFixed(2), 15)} | ${pad(r.changeAwareSessionsMs.toFixed(2), 17)} | ${pad(r.cpuPerStreamUs.toFixed(0), 6)}`,
    );
  }
}
const ratio = (what: string) =>
  ((cases[`${what}/10000`]?.ms ?? 0) / (cases[`${what}/100`]?.ms ?? 1)).toFixed(2);
console.log(`ratio 10k/100, focused: ${ratio("focused (3 services)")} (target ≤ 1.2)`);
console.log(`ratio 10k/100, whole mesh: ${ratio("whole mesh (every EDS)")} (target ≤ 1.5)`);
for (const [what, limit] of [
  ["focused (3 services)", 1.2],
  ["whole mesh (every EDS)", 1.5],
] as const)
  targets.push({
    figure: `one endpoint change, 10k vs 100 services, ${what.replace(" (every EDS)", " subscriber")}`,
    target: `ratio ≤ ${limit}`,
    measured: `${ratio(what)} (${cases[`${what}/10000`]?.ms.toFixed(2)} / ${cases[`${what}/100`]?.ms.toFixed(2)} ms)`,
    floor: "the 100-service run",
    met: Number(ratio(what)) <= limit,
  });

console.log(
  "\none VirtualService event for a ServiceEntry host (memory store, + 100 ServiceEntries; A/B alternating, median of 30)",
);
console.log(
  "services | host index ms (entries read) | listing every service, before ms (entries) | wildcard host ms (entries)",
);
for (const n of [1000, 10_000]) {
  const r = await measureVsHostIndex(n);
  const cell = (x: { medianMs: number; reads: number }, w: number) =>
    pad(`${x.medianMs.toFixed(2)} (${x.reads})`, w);
  console.log(
    `${pad(n, 8)} | ${cell(r.index, 28)} | ${cell(r["scan (before)"], 42)} | ${cell(r.wildcard, 26)}`,
  );
}

console.log(
  "\nXDS_AUTH=jwt: tokens verified per second by the guard every xDS read asks (lib/auth; static JWKS and" +
    " HS256 secret, Kubernetes-shaped tokens, median of 7 rounds of 2,000), beside WebCrypto's verify alone (test/bench/jwt-verify.ts)",
);
printJwtVerify(await measureJwtVerify());

console.log(
  "\nthe CA: CreateCertificate calls signed per second (ES256 service-account token, P-256 CSR, self-signed P-256 root;" +
    " Connect JSON over HTTP/1.1, 8 in flight, median of 5 rounds of 300) on Node, on workerd (unstable_dev) and on" +
    " the Lambda xDS function (local harness over dynalite)," +
    " beside lib/ca's signCsr alone and WebCrypto's ECDSA P-256 sign alone (test/bench/ca-sign.ts)",
);
printCaSign(await measureCaSign());

console.log(
  "\ningest and publish throughput (with their targets; ingest app in-process, 500-event NDJSON batches, memory store," +
    " Node's synchronous SHA-256; Services + EndpointSlices × 10 endpoints; floor = toBinary of every published resource;" +
    " work floor = JSON.parse + validation of every event + the generators over views in memory + toBinary + SHA-256 of every resource, same run)",
);
console.log(
  "services | events | ingest events/s (target ≥ 20,000) | ingest s (CPU s) | publish s (CPU s) | publish max stall ms | resources | floor s | (ingest + publish) / floor (target ≤ 1.5) | parse s | parse + validate s | generate s | hash s | work floor s | / work floor",
);
for (const n of [1000, 10_000]) {
  const r = await measureThroughputAsStarted(n);
  const s = (ms: number) => (ms / 1000).toFixed(2);
  if (n === 10_000)
    targets.push(
      {
        figure: "ingest, batched watch events, 10k mesh",
        target: "≥ 20,000 events/s",
        measured: `${r.eventsPerSecond.toFixed(0)} events/s`,
        floor: `parse + validate alone ${(r.events / (r.validateFloorMs / 1000)).toFixed(0)} events/s`,
        met: r.eventsPerSecond >= 20_000,
      },
      {
        figure: "10k mesh ingested + published",
        target: "≤ 1.5x encoding floor",
        measured: `${s(r.ingestMs + r.flushMs)} s = ${r.ratio.toFixed(1)}x floor, ${r.workRatio.toFixed(1)}x work floor`,
        floor: `encoding ${s(r.floorMs)} s; work ${s(r.workFloorMs)} s = ${(r.workFloorMs / r.floorMs).toFixed(2)}x`,
        met: r.ratio <= 1.5,
      },
    );
  console.log(
    `${pad(n, 8)} | ${pad(r.events, 6)} | ${pad(r.eventsPerSecond.toFixed(0), 33)} | ${pad(`${s(r.ingestMs)} (${s(r.ingestCpuMs)})`, 16)} | ${pad(`${s(r.flushMs)} (${s(r.flushCpuMs)})`, 17)} | ${pad(r.publishMaxStallMs.toFixed(0), 20)} | ${pad(r.resources, 9)} | ${pad(s(r.floorMs), 7)} | ${pad(`${r.ratio.toFixed(1)}x`, 41)} | ${pad(s(r.parseFloorMs), 7)} | ${pad(s(r.validateFloorMs), 18)} | ${pad(s(r.generateFloorMs), 10)} | ${pad(s(r.hashFloorMs), 6)} | ${pad(s(r.workFloorMs), 12)} | ${pad(`${r.workRatio.toFixed(1)}x`, 12)}`,
  );
}

console.log(
  "\nthe largest xDS message: a grpc-js client with its default limits (4 MiB received) subscribes to the whole mesh" +
    " (10k Services + 10k EndpointSlices × 10 endpoints, ingested by POST): CDS and LDS wildcard, EDS and RDS by name;" +
    " test/bench/largest-message.ts",
);
console.log(
  "protocol | type                  | resources | responses | largest bytes (limit 4,194,304) | total bytes | error",
);
{
  const r = await measureLargestMessage(10_000, 10);
  for (const row of r.rows)
    console.log(
      `${row.protocol.padEnd(8)} | ${row.type.padEnd(21)} | ${pad(row.resources, 9)} | ${pad(row.responses, 9)} | ${pad(row.largestBytes, 31)} | ${pad(row.totalBytes, 11)} | ${row.error ? decodeURIComponent(row.error).slice(0, 110) : "none"}`,
    );
  console.log(
    `SotW CDS under EDGEPILOT_MAX_RESPONSE_BYTES=${r.tooLarge.budget}: the client got ${decodeURIComponent(r.tooLarge.clientError).slice(0, 90)}...; the server logged: ${r.tooLarge.logLine}`,
  );
  const largest = Math.max(...r.rows.map((x) => x.largestBytes));
  // Every answer arrived whole, or (SotW CDS/LDS, which cannot be split) was refused naming the limit.
  const clean = r.rows.every(
    (x) =>
      (x.error === undefined && x.resources === r.services) ||
      (x.protocol === "SotW" &&
        (x.type === "Cluster" || x.type === "Listener") &&
        /EDGEPILOT_MAX_RESPONSE_BYTES/.test(decodeURIComponent(x.error ?? ""))),
  );
  const total = Math.max(...r.rows.map((x) => x.totalBytes));
  targets.push({
    figure: "largest xDS message, 10k whole-mesh subscriber",
    target: "< 4 MiB, or a clear error (SotW CDS/LDS)",
    measured: `${largest} bytes`,
    floor: `largest whole answer ${total} bytes`,
    met: largest < grpcDefaultLimit && clean,
  });
}

console.log(
  "\nDurable Object calls per ingest batch (the real Worker on workerd via wrangler unstable_dev; the MeshStore's own" +
    " count, edgepilot_durable_object_requests on GET /metrics, before and after each POST; test/bench/do-calls.ts)",
);
console.log("events | DO calls (target ≤ 2) | fetch | store | kick | POST ms");
{
  const rows = await measureDoCalls();
  for (const r of rows)
    console.log(
      `${pad(r.events, 6)} | ${pad(r.calls, 21)} | ${pad(r.byEntry.fetch, 5)} | ${pad(r.byEntry.store, 5)} | ${pad(r.byEntry.kick, 4)} | ${pad(r.ms.toFixed(0), 7)}`,
    );
  targets.push({
    figure: "Workers ingest: Durable Object calls per batch",
    target: "≤ 2, whatever its size",
    measured: rows.map((r) => `${r.calls} (${r.events} events)`).join(", "),
    floor: "1 (the forward)",
    met: rows.every((r) => r.calls <= 2),
  });
}

console.log(
  "\nwhat one MeshStore Durable Object holds (the real Worker on workerd via wrangler unstable_dev, fresh SQLite per" +
    " run; N Services + N EndpointSlices × 10 endpoints in 500-event batches; see docs/scaling.md)",
);
console.log(
  "mode            | services | batch ms p50/max | batch CPU ms p50/max | flushes | flush CPU ms max (limit 30,000) | flush + Watch CPU ms max | RSS MB start/end/max | heap MB max/end (limit 128) | SQLite MB | largest value KB (limit 2,048) | failures",
);
for (const [mode, sizes] of [
  ["per-batch", [1000, 2000, 5000, 10_000, 20_000]],
  ["per-batch+watch", [1000, 10_000]],
  ["one-flush", [1000, 2000, 5000]],
] as const) {
  for (const n of sizes) {
    const r = await measureCapacity(n, mode);
    const f = (x: number) => (Number.isNaN(x) ? "-" : x.toFixed(0));
    console.log(
      `${mode.padEnd(15)} | ${pad(n, 8)} | ${pad(`${f(r.batchMedianMs)}/${f(r.batchMaxMs)}`, 16)} | ${pad(`${f(r.batchCpuMedianMs)}/${f(r.batchCpuMaxMs)}`, 20)} | ${pad(r.flushes, 7)} | ${pad(f(r.flushCpuMaxMs), 31)} | ${pad(f(r.watchCpuMaxMs), 24)} | ${pad(`${f(r.rssStartMb)}/${f(r.rssEndMb)}/${f(r.rssMaxMb)}`, 20)} | ${pad(`${f(r.heapMaxMb)}/${f(r.heapEndMb)}`, 27)} | ${pad(f(r.sqliteMb), 9)} | ${pad(`${f(r.largestValue.kb)} ${r.largestValue.key.slice(0, 20)}`, 30)} | ${r.failures.join("; ").slice(0, 120) || "none"}`,
    );
  }
}

console.log(
  "\nNetwork views at 10,000 services (two networks, 2+2 pods each, tlsMode istio, a gateway each in MeshNetworks):" +
    " one view's whole EDS derived on its first proxy, then a second proxy of the view (the host's cache); floor:" +
    " the same names read without a view",
);
console.log(
  "view                                        | assignments | differing | shared bytes | view bytes | floor ms | first proxy ms | second proxy ms",
);
for (const r of await measureNetworkViews(10_000))
  console.log(
    `${r.view.padEnd(43)} | ${pad(r.assignments, 11)} | ${pad(r.differing, 9)} | ${pad(r.sharedBytes, 12)} | ${pad(r.viewBytes, 10)} | ${pad(r.sharedReadMs, 8)} | ${pad(r.firstProxyMs, 14)} | ${r.secondProxyMs}`,
  );

console.log(
  "\nLambda cold start (each entry bundled by esbuild as deployed, a fresh node process per run over dynalite; medians of 5)",
);
console.log("function | bundle KiB | module load ms | first answer ms | load to answer ms");
for (const r of await measureLambdaColdStart(5))
  console.log(
    `${r.fn.padEnd(8)} | ${pad(r.bundleKiB, 10)} | ${pad(r.importMs, 14)} | ${pad(r.firstAnswerMs, 15)} | ${r.loadToAnswerMs}`,
  );

console.log("\ntargets, measured above (floor: measured in the same run)");
console.log(`${"figure".padEnd(55)} | ${"target".padEnd(40)} | ${"measured".padEnd(60)} | floor | met`);
for (const t of targets)
  console.log(
    `${t.figure.padEnd(55)} | ${t.target.padEnd(40)} | ${t.measured.padEnd(60)} | ${t.floor} | ${t.met ? "yes" : "NO"}`,
  );
