/**
 * DynamoDB as the store (lib/store/dynamodb.ts over dynalite, started here), beside the memory
 * store in the same run: the DynamoDB calls, items and request units one ingested event and one
 * push cost, and the ingest ▶ published push time. Items and units are what DynamoDB reports
 * (ReturnConsumedCapacity, dynalite computes them as DynamoDB does: 4 KB read units, strongly
 * consistent; 1 KB write units); milliseconds are dynalite's on this machine, not AWS's.
 * Alone: `npx tsx test/bench/dynamodb.ts [services]`.
 */
import { applyEvents, defaultRegistryOptions, validateEvents } from "../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../lib/push/run.ts";
import { generators } from "../../lib/resources/generators/index.ts";
import { createDynamoStore } from "../../lib/store/dynamodb.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import type { Store } from "../../lib/store/store.ts";
import { recordCommands, type SentCommand, startDynalite } from "../support/dynalite.ts";
import { serviceEvents, sliceEvent } from "./mesh.ts";

/** What one phase cost: DynamoDB calls, items read and written, read and write units (zero on memory). */
export interface PhaseCost {
  calls: number;
  itemsRead: number;
  itemsWritten: number;
  readUnits: number;
  writeUnits: number;
}

export interface DynamoBenchRow {
  store: "memory" | "dynamodb";
  services: number;
  /** The initial load, per ingested event (ingest only) and per push (the flushes it took). */
  loadPerEvent: PhaseCost;
  /** The initial load's ingest (all events in one batch) and its push, ms. */
  loadIngestMs: number;
  loadPushMs: number;
  loadPushes: number;
  loadPerPush: PhaseCost;
  /** One EndpointSlice change: its ingest and its push. */
  changeIngest: PhaseCost;
  changePush: PhaseCost;
  /** Ingest ▶ published push of one EndpointSlice change: median and max ms of `runs`. */
  medianMs: number;
  maxMs: number;
  runs: number;
}

const zero = (): PhaseCost => ({ calls: 0, itemsRead: 0, itemsWritten: 0, readUnits: 0, writeUnits: 0 });

/** Counts commands into the current phase. */
function counter() {
  let phase = zero();
  return {
    on(c: SentCommand) {
      phase.calls++;
      if (/Get|Query/.test(c.action)) phase.itemsRead += c.items;
      else phase.itemsWritten += c.items;
      phase.readUnits += c.readUnits;
      phase.writeUnits += c.writeUnits;
    },
    take(): PhaseCost {
      const p = phase;
      phase = zero();
      return p;
    },
  };
}

const per = (p: PhaseCost, n: number): PhaseCost => ({
  calls: p.calls / n,
  itemsRead: p.itemsRead / n,
  itemsWritten: p.itemsWritten / n,
  readUnits: p.readUnits / n,
  writeUnits: p.writeUnits / n,
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function measureOn(
  name: DynamoBenchRow["store"],
  store: Store,
  count: ReturnType<typeof counter>,
  services: number,
  runs: number,
): Promise<DynamoBenchRow> {
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const deps = { store, now, registry: defaultRegistryOptions };
  const flushDeps = { store, generators, context: { domainSuffix: "cluster.local" }, now };
  const ingest = async (events: unknown[]) => {
    const v = validateEvents(events);
    if (!v.ok) throw new Error(v.error.message);
    await applyEvents(deps, "bench", v.value);
  };
  const push = async () => {
    clock += defaultDebounceOptions.debounceAfter;
    return (await runDebounceTurn(flushDeps, defaultDebounceOptions)).flushes.length;
  };
  const load: unknown[] = [];
  for (let n = 0; n < services; n++) load.push(...serviceEvents(n));
  count.take();
  const t0 = performance.now();
  await ingest(load);
  const loadIngestMs = performance.now() - t0;
  const loadIngest = count.take();
  const t1 = performance.now();
  const loadPushes = await push();
  const loadPushMs = performance.now() - t1;
  const loadPush = count.take();
  const times: number[] = [];
  let changeIngest = zero();
  let changePush = zero();
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await ingest([sliceEvent(Math.floor(services / 2), [`10.200.${i % 250}.${(i % 200) + 1}`], "MODIFIED")]);
    const ingested = count.take();
    await push();
    times.push(performance.now() - started);
    const pushed = count.take();
    if (i === runs - 1) [changeIngest, changePush] = [ingested, pushed];
  }
  return {
    store: name,
    services,
    loadPerEvent: per(loadIngest, load.length),
    loadIngestMs,
    loadPushMs,
    loadPushes,
    loadPerPush: per(loadPush, Math.max(1, loadPushes)),
    changeIngest,
    changePush,
    medianMs: median(times),
    maxMs: Math.max(...times),
    runs,
  };
}

/** The memory store, its calls and items counted as the DynamoDB ones are (no request units). */
function countedMemory(count: ReturnType<typeof counter>): Store {
  const store = createMemoryStore();
  const on = (action: string, items: number) => count.on({ action, items, readUnits: 0, writeUnits: 0 });
  return {
    get: async (key) => {
      const e = await store.get(key);
      on("Get", e ? 1 : 0);
      return e as never;
    },
    getMany: async (keys) => {
      const m = await store.getMany(keys);
      on("Get", m.size);
      return m as never;
    },
    list: async (prefix, o) => {
      const page = await store.list(prefix, o);
      on("Query", page.entries.length);
      return page as never;
    },
    put: async (key, value, o) => {
      on("Put", 1);
      return store.put(key, value, o);
    },
    delete: async (key, o) => {
      on("Delete", 1);
      return store.delete(key, o);
    },
  };
}

/** Both stores over the same mesh and changes, memory first. */
export async function measureDynamo(services = 50, runs = 10): Promise<DynamoBenchRow[]> {
  const memoryCount = counter();
  const rows = [await measureOn("memory", countedMemory(memoryCount), memoryCount, services, runs)];
  const dynalite = await startDynalite();
  try {
    const count = counter();
    const client = recordCommands(dynalite.client(), (c) => count.on(c));
    rows.push(
      await measureOn(
        "dynamodb",
        createDynamoStore({ client, table: dynalite.table }),
        count,
        services,
        runs,
      ),
    );
  } finally {
    await dynalite.stop();
  }
  return rows;
}

const pad = (v: string | number, n: number) => String(v).padStart(n);
const cost = (p: PhaseCost) =>
  `${pad(p.calls.toFixed(1), 5)} | ${pad(p.itemsRead.toFixed(1), 6)} | ${pad(p.itemsWritten.toFixed(1), 7)} | ${pad(p.readUnits.toFixed(1), 6)} | ${pad(p.writeUnits.toFixed(1), 6)}`;

/** Prints the rows as `npm run bench` shows them. */
export function printDynamo(rows: readonly DynamoBenchRow[]): void {
  console.log(
    "store    | what                          | calls |   read | written |    RCU |    WCU   (items; memory: store calls)",
  );
  for (const r of rows) {
    console.log(`${r.store.padEnd(8)} | ${"load: per ingested event".padEnd(29)} | ${cost(r.loadPerEvent)}`);
    console.log(
      `${r.store.padEnd(8)} | ${`load: per push (${r.loadPushes})`.padEnd(29)} | ${cost(r.loadPerPush)}`,
    );
    console.log(`${r.store.padEnd(8)} | ${"one slice change: ingest".padEnd(29)} | ${cost(r.changeIngest)}`);
    console.log(`${r.store.padEnd(8)} | ${"one slice change: its push".padEnd(29)} | ${cost(r.changePush)}`);
  }
  console.log("store    | services | load: ingest ms (events/s) | its push ms");
  for (const r of rows) {
    const events = r.services * 5;
    const rate = (events / r.loadIngestMs) * 1000;
    console.log(
      `${r.store.padEnd(8)} | ${pad(r.services, 8)} | ${pad(`${r.loadIngestMs.toFixed(0)} (${rate.toFixed(0)})`, 26)} | ${pad(r.loadPushMs.toFixed(0), 11)}`,
    );
  }
  console.log("store    | services | ingest ▶ published push: median ms | max ms (runs)");
  for (const r of rows)
    console.log(
      `${r.store.padEnd(8)} | ${pad(r.services, 8)} | ${pad(r.medianMs.toFixed(1), 34)} | ${pad(`${r.maxMs.toFixed(1)} (${r.runs})`, 12)}`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printDynamo(await measureDynamo(Number(process.argv[2] ?? 50)));
}
