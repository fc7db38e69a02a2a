/**
 * Memory: the Node server holding a 10k-service mesh (10k Services + 10k EndpointSlices
 * × 10 endpoints) and serving 1,000 Delta streams (clients in another process, fanout-clients.ts),
 * through 100 endpoint pushes. The server is its own process started exactly as `npm start` starts
 * it (package.json's `start` script: its environment, node flags and compiled entry, built fresh
 * by `npm run build`), plus --expose-gc and memory-probe.mjs, which reads its memory after a full
 * GC once V8 has unmapped the freed pages: with the mesh alone, at push 10 and at push 100 (no
 * growth: push 100 ≈ push 10). MEMORY_SMAPS_DIR=<dir> writes the server's /proc/self/smaps at
 * each sample (<dir>/mesh.smaps, push10.smaps, push100.smaps) and V8's heap and space statistics
 * beside it (<dir>/mesh.v8.json, ...); MEMORY_SERVER_OUT=<file> keeps the server's stdout (where
 * --trace-gc writes). MEMORY_START="<VAR=value ...> node
 * <flags> <entry>" measures another command line than package.json's `start`;
 * MEMORY_HEAP_SNAPSHOT=<file> writes the server's heap snapshot at push 10 (the samples after it then
 * include the snapshot's own memory); MEMORY_HEAP_PROFILE=<file.heapprofile> the sampling heap profile
 * of pushes 11 to 100 of what outlived a scavenge (the old generation's allocations).
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../lib/gen/edgepilot/v1/status_pb.ts";
import { forkClients, postEvents, settled } from "./fanout.ts";
import { meshEvents } from "./ingest-throughput.ts";
import { ask, startServer } from "./npm-start.ts";

/** Process memory in MB after a full GC. */
export interface MemorySample {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Memory outside the JS heap (Buffers, ArrayBuffers, native objects). */
  externalMb: number;
  /** RSS right after the GC, before V8 unmapped the pages it freed (the transient peak). */
  rssAtGcMb: number;
}

export interface MemoryReport {
  services: number;
  streams: number;
  pushes: number;
  /** How the server was started (package.json's `start`). */
  command: string;
  /** The mesh published, no stream open. */
  mesh: MemorySample;
  /** After push 10 and push 100, the streams open. */
  push10: MemorySample;
  push100: MemorySample;
}

const ns = "mesh";

/** The server's memory after a full GC (memory-probe.mjs). */
async function sample(server: ChildProcess, label: string): Promise<MemorySample> {
  await settled();
  const dir = process.env.MEMORY_SMAPS_DIR;
  const answer = new Promise<{ usage: NodeJS.MemoryUsage; rssAtGc: number }>((resolve) =>
    server.once("message", (m) => resolve(m as { usage: NodeJS.MemoryUsage; rssAtGc: number })),
  );
  server.send({ kind: "sample", smapsFile: dir ? `${dir}/${label}.smaps` : undefined });
  const { usage: m, rssAtGc } = await answer;
  const mb = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    heapTotalMb: mb(m.heapTotal),
    externalMb: mb(m.external),
    rssAtGcMb: mb(rssAtGc),
  };
}

/** The target service's slice, MODIFIED to `change`'s 10 endpoints. */
function changedSlice(change: number): unknown {
  const slice = meshEvents(0, 10)[1] as { type: string; object: { endpoints: { addresses: string[] }[] } };
  slice.type = "MODIFIED";
  slice.object.endpoints.forEach((e, i) => {
    e.addresses = [`10.251.${change % 250}.${i + 1}`];
  });
  return slice;
}

/** Waits until the server has published every queued push (its StatusService). */
export async function published(xdsPort: number): Promise<void> {
  const status = createClient(StatusService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }));
  for (;;) {
    const s = await status.getStatus(create(StatusService.method.getStatus.input, {}));
    if (s.pendingPushes === 0 && s.pushVersion > 0n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** In this process: the mesh, the streams, the pushes; the server in its own. */
async function run(services: number, streams: number, pushes: number): Promise<MemoryReport> {
  const server = await startServer("memory-probe.mjs", ["--expose-gc"]);
  const out = process.env.MEMORY_SERVER_OUT;
  if (out) server.child.stdout?.pipe(createWriteStream(out));
  let clients: ReturnType<typeof forkClients> | undefined;
  try {
    let batch: unknown[] = [];
    for (let n = 0; n < services; n++) {
      batch.push(...meshEvents(n, 10));
      if (batch.length >= 2000 || n === services - 1) {
        await postEvents(server.port, batch);
        batch = [];
      }
    }
    await published(server.xdsPort);
    const mesh = await sample(server.child, "mesh");
    clients = forkClients(server, streams, services, ns);
    await clients.next("ready");
    const samples: MemorySample[] = [];
    for (let c = 1; c <= pushes; c++) {
      const seen = clients.next("seen");
      clients.send({ kind: "post", change: c, events: [changedSlice(c)] });
      await seen;
      const heapProfile = process.env.MEMORY_HEAP_PROFILE;
      if (heapProfile && c === pushes) await ask(server.child, { kind: "heap-stop", file: heapProfile });
      if (c === 10 || c === pushes) samples.push(await sample(server.child, `push${c}`));
      if (heapProfile && c === 10) await ask(server.child, { kind: "heap-start" });
      const snapshot = process.env.MEMORY_HEAP_SNAPSHOT;
      if (c === 10 && snapshot) {
        const written = new Promise((r) => server.child.once("message", r));
        server.child.send({ kind: "snapshot", file: snapshot });
        await written;
      }
    }
    return {
      services,
      streams,
      pushes,
      command: server.line,
      mesh,
      push10: samples[0] as MemorySample,
      push100: samples[1] as MemorySample,
    };
  } finally {
    await clients?.stop();
    await server.stop();
  }
}

/** Runs the measurement from a fresh driver process; the server it measures is its own process. */
export function measureMemory(services = 10_000, streams = 1000, pushes = 100): MemoryReport {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", new URL(import.meta.url).pathname, String(services), String(streams), String(pushes)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 },
  );
  const last = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as MemoryReport;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services, streams, pushes] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await run(services ?? 10_000, streams ?? 1000, pushes ?? 100)));
}
