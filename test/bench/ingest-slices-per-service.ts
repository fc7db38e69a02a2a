/**
 * Ingest of services with many EndpointSlices each (batch-level apply): `services`
 * Services, each with `slices` slices of 10 endpoints, in NDJSON batches of 500 events. Every
 * slice event rebuilds its service's shard, so the per-event cost grows with the service's
 * endpoints; the throughput row (ingest-throughput.ts) has one slice per service and cannot show it.
 * `npx tsx test/bench/ingest-slices-per-service.ts 2 500` (runs as npm start runs the server;
 * INGEST_BENCH_IN_PROCESS=1 in this process).
 */
import { asStarted, runAsStarted } from "./as-started.ts";
import { createBenchIngest, mainThreadCpuMs, meshEvents } from "./ingest-throughput.ts";

export interface SlicesPerServiceReport {
  services: number;
  slicesPerService: number;
  events: number;
  ingestMs: number;
  eventsPerSecond: number;
  /** Main-thread CPU per event (µs), null where /proc is not there. */
  mainCpuUsPerEvent: number | null;
}

/** `services` Services and `slices` slices of 10 endpoints each, every address distinct. */
function events(services: number, slices: number): unknown[] {
  const out: unknown[] = [];
  let k = 0;
  for (let s = 0; s < services; s++) {
    const [service, slice] = meshEvents(s, 10) as [unknown, { object: Record<string, unknown> }];
    out.push(service);
    for (let p = 0; p < slices; p++) {
      k++;
      const object = slice.object as { metadata: Record<string, unknown>; endpoints: unknown[] };
      out.push({
        type: "ADDED",
        object: {
          ...object,
          metadata: { ...object.metadata, name: `svc-${s}-${p}`, resourceVersion: String(1_000_000 + k) },
          endpoints: object.endpoints.map((_, i) => ({
            addresses: [`10.${(k >> 8) & 255}.${k & 255}.${i + 1}`],
            conditions: { ready: true },
          })),
        },
      });
    }
  }
  return out;
}

/** Ingests the mesh in batches of `batch` events; the ingest alone is timed (no publish). */
export async function measureSlicesPerService(
  services: number,
  slices: number,
  batch = 500,
): Promise<SlicesPerServiceReport> {
  const all = events(services, slices);
  const bodies: string[] = [];
  for (let i = 0; i < all.length; i += batch)
    bodies.push(
      all
        .slice(i, i + batch)
        .map((e) => JSON.stringify(e))
        .join("\n"),
    );
  const bench = createBenchIngest();
  const started = performance.now();
  const mainStarted = mainThreadCpuMs();
  for (const body of bodies) await bench.post(body);
  const ingestMs = performance.now() - started;
  const mainEnded = mainThreadCpuMs();
  return {
    services,
    slicesPerService: slices,
    events: all.length,
    ingestMs,
    eventsPerSecond: all.length / (ingestMs / 1000),
    mainCpuUsPerEvent:
      mainStarted === null || mainEnded === null ? null : ((mainEnded - mainStarted) * 1000) / all.length,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services = "2", slices = "500"] = process.argv.slice(2);
  console.log(
    asStarted || process.env.INGEST_BENCH_IN_PROCESS === "1"
      ? JSON.stringify(await measureSlicesPerService(Number(services), Number(slices)))
      : runAsStarted("ingest-slices-per-service", [services, slices]).trim(),
  );
}
