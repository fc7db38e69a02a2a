/**
 * The cost of one VirtualService event whose host is not in Kubernetes form, at N Kubernetes
 * services (memory store), A/B in one run, alternating:
 * - `index`: an exact ServiceEntry host (`api-7.example.com`), found through the host index
 *   (lib/ingest/external-hosts.ts): one read for the hosts;
 * - `scan (before)`: the same event plus a listing of every service for such a host (the baseline
 *   the index is judged against: what the event costs without it);
 * - `wildcard`: `*.example.com`, which still lists every service (it may match any).
 * Median per event over the rounds, and the store entries the event read.
 * `npx tsx test/bench/vs-host-index.ts 10000`.
 */
import { applyEvents, defaultRegistryOptions, validateEvents } from "../../lib/ingest/index.ts";
import type { Service } from "../../lib/model/index.ts";
import { keys, type ListOptions, listAll, type Store } from "../../lib/store/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { serviceEntry, virtualService } from "../unit/ingest/support/istio.ts";

/** Counts the entries read (get, getMany, list). */
function counting(store: Store) {
  const c = { read: 0 };
  const counted: Store = {
    ...store,
    get: async (k) => {
      c.read++;
      return store.get(k);
    },
    getMany: async (ks) => {
      c.read += ks.length;
      return store.getMany(ks);
    },
    list: async <T>(p: string, o?: ListOptions) => {
      const page = await store.list<T>(p, o);
      c.read += page.entries.length;
      return page;
    },
  };
  return { store: counted, c };
}

type Row = "index" | "scan (before)" | "wildcard";

/** Per row: the median ms of one event over `rounds`, and the store entries one event read. */
export type VsHostIndexResult = Record<Row, { medianMs: number; reads: number }>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Measures the three rows at `n` services, alternating them round by round. */
export async function measureVsHostIndex(n: number, rounds = 30): Promise<VsHostIndexResult> {
  const { store, c } = counting(createMemoryStore());
  const deps = { store, now: () => 0, registry: defaultRegistryOptions };
  async function apply(events: unknown[]) {
    const v = validateEvents(events);
    if (!v.ok) throw new Error(JSON.stringify(v.error));
    return applyEvents(deps, "east", v.value);
  }

  const services = Array.from({ length: n }, (_, i) => ({
    type: "ADDED",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: `svc-${i}`, namespace: `ns-${i % 100}`, resourceVersion: "1" },
      spec: { clusterIP: `10.96.${Math.floor(i / 250)}.${i % 250}`, ports: [{ name: "grpc", port: 9080 }] },
    },
  }));
  for (let at = 0; at < services.length; at += 1000) await apply(services.slice(at, at + 1000));
  await apply(
    Array.from({ length: 100 }, (_, i) => ({
      type: "ADDED",
      object: serviceEntry(`api-${i}`, { hosts: [`api-${i}.example.com`] }, { namespace: `ext-${i % 10}` }),
    })),
  );

  let rv = 10;
  /**
   * One event of the VirtualService for `host` (one per host: a change's scope is its old and new
   * hosts; its timeout changes each time, so it is never unchanged).
   */
  const vsEvent = (host: string) => ({
    type: "MODIFIED",
    object: virtualService(
      host.startsWith("*") ? "routes-wildcard" : "routes",
      { http: [{ timeout: `${++rv}s`, route: [{ destination: { host: "api-7.example.com" } }] }] },
      { hosts: [host], resourceVersion: String(rv), namespace: "ext-7" },
    ),
  });

  const times: Record<Row, number[]> = { index: [], "scan (before)": [], wildcard: [] };
  const reads: Record<Row, number> = { index: 0, "scan (before)": 0, wildcard: 0 };
  async function measure(row: Row, run: () => Promise<unknown>) {
    c.read = 0;
    const t = performance.now();
    await run();
    times[row].push(performance.now() - t);
    reads[row] = c.read;
  }

  await apply([vsEvent("api-7.example.com"), vsEvent("*.example.com")]);
  for (let r = 0; r < rounds; r++) {
    await measure("index", () => apply([vsEvent("api-7.example.com")]));
    await measure("scan (before)", async () => {
      await apply([vsEvent("api-7.example.com")]);
      // What the previous serviceKeys did for a host not in Kubernetes form: list every service.
      (await listAll<Service>(store, keys.services())).filter(
        (e) => e.value.hostname === "api-7.example.com",
      );
    });
    await measure("wildcard", () => apply([vsEvent("*.example.com")]));
  }
  const out = {} as VsHostIndexResult;
  for (const row of Object.keys(times) as Row[])
    out[row] = { medianMs: median(times[row]), reads: reads[row] };
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 10_000);
  const rounds = Number(process.argv[3] ?? 30);
  const r = await measureVsHostIndex(n, rounds);
  console.log(
    `One VirtualService event at ${n} services + 100 ServiceEntries (memory store, median of ${rounds}):`,
  );
  for (const [row, { medianMs, reads }] of Object.entries(r))
    console.log(
      `  ${row.padEnd(14)} ${medianMs.toFixed(3).padStart(9)} ms  ${String(reads).padStart(6)} entries read`,
    );
}
