/**
 * Store throughput, memory against file (SQLite via libsql), over the keys a 10k-service mesh
 * holds: one Service and one EndpointSlice piece per service, shaped as ingest writes them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileStore } from "../../lib/store/file.ts";
import { keys } from "../../lib/store/keys.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { listAll, type Store } from "../../lib/store/store.ts";

export interface StoreRates {
  store: string;
  keys: number;
  /** Operations (or, for list, entries) per second. */
  create: number;
  update: number;
  get: number;
  getMany: number;
  list: number;
}

const ns = "bench";
const host = (n: number) => `svc-${n}.${ns}.svc.cluster.local`;

function serviceValue(n: number) {
  return {
    hostname: host(n),
    namespace: ns,
    name: `svc-${n}`,
    clusterIp: `10.96.${Math.floor(n / 250)}.${n % 250}`,
    ports: [{ name: "grpc", port: 9080, protocol: "GRPC" }],
    labels: { app: `svc-${n}` },
    resourceVersion: String(n),
  };
}

function sliceValue(n: number, round: number) {
  return {
    endpoints: [0, 1, 2].map((i) => ({
      address: `10.${Math.floor(n / 250)}.${n % 250}.${i + 1 + round}`,
      port: 9080,
      ready: true,
      serviceAccount: `spiffe://cluster.local/ns/${ns}/sa/svc-${n}`,
      locality: { region: "r", zone: "z" },
      pod: `svc-${n}-${i}`,
    })),
  };
}

/** Runs `f` over 0..n-1 and returns operations per second. */
async function rate(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  return Math.round((n / (performance.now() - started)) * 1000);
}

/** Loads `services` services and slices into `store`, then reads and rewrites them. */
export async function measureStore(name: string, store: Store, services: number): Promise<StoreRates> {
  const svcKey = (i: number) => keys.service(ns, host(i), "Kubernetes");
  const sliceKey = (i: number) => keys.slice(ns, host(i), "Kubernetes", `svc-${i}-abcde`);
  const create = await rate(services * 2, (i) =>
    i % 2
      ? store.put(sliceKey(i >> 1), sliceValue(i >> 1, 0))
      : store.put(svcKey(i >> 1), serviceValue(i >> 1)),
  );
  // Scattered reads: every key once, in an order unrelated to key order.
  const order = Array.from({ length: services }, (_, i) => (i * 7919) % services);
  const get = await rate(services, (i) => store.get(sliceKey(order[i]!)));
  const batches = Math.ceil(services / 100);
  const perBatch = await rate(batches, (b) =>
    store.getMany(order.slice(b * 100, b * 100 + 100).map((i) => svcKey(i))),
  );
  const started = performance.now();
  const listed = (await listAll(store, "svc/")).length + (await listAll(store, "eps/")).length;
  const list = Math.round((listed / (performance.now() - started)) * 1000);
  if (listed !== services * 2) throw new Error(`listed ${listed} of ${services * 2} keys`);
  // Compare-and-set rewrites, as an endpoint change does: read the version, write if unchanged.
  const update = await rate(services, async (i) => {
    const current = await store.get(sliceKey(i));
    const r = await store.put(sliceKey(i), sliceValue(i, 1), { ifVersion: current?.version ?? 0 });
    if (!r.ok) throw new Error(`lost a compare-and-set on ${sliceKey(i)}`);
  });
  return { store: name, keys: services * 2, create, update, get, getMany: perBatch * 100, list };
}

/** Both stores on the same workload; the file store in a fresh temporary directory. */
export async function compareStores(services: number): Promise<StoreRates[]> {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-bench-"));
  try {
    const memory = await measureStore("memory", createMemoryStore(), services);
    const file = createFileStore({ dir });
    try {
      return [memory, await measureStore("file", file, services)];
    } finally {
      file.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
