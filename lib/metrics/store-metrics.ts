/**
 * A measuring decorator of the Store port: edgepilot_store_operations{op} counts every call and
 * edgepilot_store_seconds{op} times the asynchronous ones. It keeps the in-process capabilities
 * (store.ts readNow, applyStagedWrites) so the staged view still reads synchronously and commits in
 * bulk through it: a synchronous read is counted, not timed (a clock read costs more than the read).
 */
import {
  applyStagedWrites,
  isBulkWritable,
  isSyncReadable,
  readNow,
  type StagedWrite,
  type Store,
} from "../store/store.ts";
import { seconds } from "./clock.ts";
import type { Registry } from "./registry.ts";

/** Store latency buckets (seconds): a memory map read to a Durable Object round trip. */
const storeBuckets = [0.00001, 0.0001, 0.001, 0.01, 0.1, 1];

/** `store` with every operation counted (and the asynchronous ones timed) on `registry`. */
export function measureStore(store: Store, registry: Registry): Store {
  const ops = registry.counter({
    name: "edgepilot_store_operations",
    help: "Store operations by op (get, getMany, put, delete, list, readNow, commit: a staged batch's bulk write).",
    labelNames: ["op"],
  });
  const time = registry.histogram({
    name: "edgepilot_store_seconds",
    help: "Store operation latency in seconds, by op (readNow is not timed).",
    labelNames: ["op"],
    buckets: storeBuckets,
  });
  const timed = (op: string) => {
    const count = ops.labels(op);
    const h = time.labels(op);
    return async <T>(run: () => Promise<T>): Promise<T> => {
      count.inc();
      const t = seconds();
      try {
        return await run();
      } finally {
        h.observe(seconds() - t);
      }
    };
  };
  const get = timed("get");
  const getMany = timed("getMany");
  const put = timed("put");
  const del = timed("delete");
  const list = timed("list");
  const measured: Store = {
    get: (key) => get(() => store.get(key)),
    getMany: (keys) => getMany(() => store.getMany(keys)),
    put: (key, value, options) => put(() => store.put(key, value, options)),
    delete: (key, options) => del(() => store.delete(key, options)),
    list: (prefix, options) => list(() => store.list(prefix, options)),
  };
  if (isSyncReadable(store)) {
    const reads = ops.labels("readNow");
    const read = store[readNow].bind(store);
    Object.defineProperty(measured, readNow, {
      value: (key: string) => {
        reads.inc();
        return read(key);
      },
    });
  }
  if (isBulkWritable(store)) {
    const commits = ops.labels("commit");
    const h = time.labels("commit");
    const apply = store[applyStagedWrites].bind(store);
    Object.defineProperty(measured, applyStagedWrites, {
      value: (writes: readonly StagedWrite[]) => {
        commits.inc();
        const t = seconds();
        apply(writes);
        h.observe(seconds() - t);
      },
    });
  }
  return measured;
}
