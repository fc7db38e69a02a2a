import { meshEvents } from "./ingest-throughput.ts";
import { startLocalWorker } from "./workerd-probe.ts";

const token = "do-calls-bench-token";
const xdsToken = "do-calls-bench-xds-token";
const requests = "edgepilot_durable_object_requests";
const batchEntries = ["fetch", "store", "kick"] as const;

export interface DoCallsRow {
  events: number;
  /** The batch's calls to the object (fetch + store + kick). */
  calls: number;
  byEntry: Record<(typeof batchEntries)[number], number>;
  ms: number;
}

/** `edgepilot_durable_object_requests{entry="<entry>"}` per entry, from one exposition. */
function requestsByEntry(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const line = new RegExp(`^${requests}\\{entry="([a-z]+)"\\} (\\d+)$`, "gm");
  for (const m of text.matchAll(line)) out.set(m[1] as string, Number(m[2]));
  return out;
}

/** Posts batches of each of `sizes` events (fresh services each) and counts the object's calls per batch. */
export async function measureDoCalls(
  sizes: readonly number[] = [1, 13, 500, 2000, 10_000],
): Promise<DoCallsRow[]> {
  const local = await startLocalWorker("do-calls", {
    EDGEPILOT_TOKEN: token,
    EDGEPILOT_XDS_TOKEN: xdsToken,
    PILOT_SYNC_TIMEOUT: "0s",
  });
  const worker = local.worker;
  const scrape = async () => {
    const res = await worker.fetch("/metrics", { headers: { authorization: `Bearer ${xdsToken}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 200)}`);
    return requestsByEntry(text);
  };
  const rows: DoCallsRow[] = [];
  try {
    await (await worker.fetch("/ready")).arrayBuffer();
    let next = 0;
    for (const size of sizes) {
      const lines: string[] = [];
      // An odd size ends on a Service without its slice: still `size` events.
      while (lines.length < size) for (const e of meshEvents(next++, 10)) lines.push(JSON.stringify(e));
      const body = lines.slice(0, size).join("\n");
      const before = await scrape();
      const started = performance.now();
      const res = await worker.fetch("/v1/events", {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
      });
      const text = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 300)}`);
      const after = await scrape();
      const delta = (e: string) => (after.get(e) ?? 0) - (before.get(e) ?? 0);
      const byEntry = { fetch: delta("fetch"), store: delta("store"), kick: delta("kick") };
      rows.push({ events: size, calls: byEntry.fetch + byEntry.store + byEntry.kick, byEntry, ms });
    }
  } finally {
    await local.stop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureDoCalls()));
}
