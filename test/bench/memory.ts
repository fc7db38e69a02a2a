/**
 * Memory (issue 8): the Node runtime holding a 10k-service mesh (10k Services + 10k
 * EndpointSlices × 10 endpoints) and serving 1,000 Delta streams (clients in a child process,
 * fanout-clients.ts), through 100 endpoint pushes. The server runs in its own process started with
 * --expose-gc, so its RSS is its own; RSS and heapUsed are read after a full GC with the mesh
 * alone, at push 10 and at push 100 (no growth: push 100 ≈ push 10). MEMORY_HEAP_SNAPSHOT=<file>
 * writes the server's heap snapshot at push 10.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { writeHeapSnapshot } from "node:v8";
import { publishedStatus } from "../../lib/push/status.ts";
import { forkClients, postEvents, settled, startBenchRuntime } from "./fanout.ts";
import { meshEvents } from "./ingest-throughput.ts";

/** Process memory in MB after a full GC. */
export interface MemorySample {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Memory outside the JS heap (Buffers, ArrayBuffers, native objects). */
  externalMb: number;
}

export interface MemoryReport {
  services: number;
  streams: number;
  pushes: number;
  /** The mesh published, no stream open. */
  mesh: MemorySample;
  /** After push 10 and push 100, the streams open. */
  push10: MemorySample;
  push100: MemorySample;
}

const ns = "mesh";

async function sample(): Promise<MemorySample> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc");
  await settled();
  gc();
  gc();
  const m = process.memoryUsage();
  const mb = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    heapTotalMb: mb(m.heapTotal),
    externalMb: mb(m.external),
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

/** In this process (started with --expose-gc): the mesh, the streams, the pushes. */
async function run(services: number, streams: number, pushes: number): Promise<MemoryReport> {
  const runtime = await startBenchRuntime();
  let clients: ReturnType<typeof forkClients> | undefined;
  try {
    let batch: unknown[] = [];
    for (let n = 0; n < services; n++) {
      batch.push(...meshEvents(n, 10));
      if (batch.length >= 2000 || n === services - 1) {
        await postEvents(runtime.port, batch);
        batch = [];
      }
    }
    while ((await publishedStatus(runtime.store)).pendingPushes > 0) await settled();
    const mesh = await sample();
    clients = forkClients(runtime, streams, services, ns);
    await clients.next("ready");
    const samples: MemorySample[] = [];
    for (let c = 1; c <= pushes; c++) {
      const seen = clients.next("seen");
      clients.send({ kind: "post", change: c, events: [changedSlice(c)] });
      await seen;
      if (c === 10 || c === pushes) samples.push(await sample());
      if (c === 10 && process.env.MEMORY_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.MEMORY_HEAP_SNAPSHOT);
    }
    return {
      services,
      streams,
      pushes,
      mesh,
      push10: samples[0] as MemorySample,
      push100: samples[1] as MemorySample,
    };
  } finally {
    await clients?.stop();
    await runtime.stop();
  }
}

/** Runs the measurement in a fresh `node --expose-gc` process (its RSS is the server's alone). */
export function measureMemory(services = 10_000, streams = 1000, pushes = 100): MemoryReport {
  const script = fileURLToPath(import.meta.url);
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", script, String(services), String(streams), String(pushes)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 },
  );
  const last = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as MemoryReport;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services, streams, pushes] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await run(services ?? 10_000, streams ?? 1000, pushes ?? 100)));
}
