/**
 * `npm run bench`: what edgepilot costs, measured on this machine. Bytes are exact and repeatable;
 * milliseconds are medians and depend on the machine.
 */
import { largeBatch, measureIngestStall } from "./ingest-stall.ts";
import { buildMesh, sliceEvent } from "./mesh.ts";
import { measureBytes } from "./xds-bytes.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function pushLatency(services: number, runs: number) {
  const started = performance.now();
  const mesh = await buildMesh(services);
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
  "\ningest ▶ published push of one EndpointSlice change (memory store; the debounce wait is not counted)",
);
console.log("services | build mesh ms | median ms | max ms (20 runs)");
for (const n of sizes) {
  const r = await pushLatency(n, 20);
  console.log(
    `${pad(n, 8)} | ${pad(r.buildMs.toFixed(0), 12)} | ${pad(r.medianMs.toFixed(2), 9)} | ${pad(r.maxMs.toFixed(2), 6)}`,
  );
}

console.log(
  "\nlargest event-loop stall while one 100k-event batch is ingested (Node runtime in-process, memory store;" +
    " /ready and FetchClusters probed meanwhile)",
);
console.log(
  "events | body MB | ingest s | max stall ms (wall) | max stall ms (busy) | /ready max ms (n) | FetchClusters max ms (n)",
);
{
  const n = 100_000;
  const r = await measureIngestStall(largeBatch(n), n);
  console.log(
    `${pad(n, 6)} | ${pad((r.bodyBytes / 1e6).toFixed(1), 7)} | ${pad((r.ingestMs / 1000).toFixed(1), 8)} | ${pad(r.maxStallMs.toFixed(0), 19)} | ${pad(r.maxBusyStallMs.toFixed(0), 19)} | ${pad(`${r.readyMaxMs.toFixed(0)} (${r.readyProbes})`, 17)} | ${pad(`${r.fetchMaxMs.toFixed(0)} (${r.fetchProbes})`, 24)}`,
  );
}
