/**
 * A measuring decorator of the Store port: edgepilot_store_operations{op} counts every call and
 * edgepilot_store_seconds{op} times one asynchronous call in `sampleEvery` (and every bulk commit). It keeps the in-process capabilities
 * (store.ts readNow, applyStagedWrites) so the staged view still reads synchronously and commits in
 * bulk through it (and a flush's writeAll, one `commit` per chunk): a synchronous read is counted,
 * not timed (a clock read costs more than the read).
 */

import { seconds } from "../clock.ts";
import {
  applyStagedWrites,
  type DeleteOptions,
  type Entry,
  isBulkWritable,
  isSyncReadable,
  type ListOptions,
  type ListPage,
  type PutOptions,
  readNow,
  type StagedWrite,
  type Store,
} from "../store/store.ts";
import type { Registry } from "./registry.ts";

/** One call in this many (per op) is timed. */
export const sampleEvery = 8;

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
    help: "Store operation latency in seconds, by op: one call in 8 timed (every commit; readNow is not timed).",
    labelNames: ["op"],
    buckets: storeBuckets,
  });
  // Each call is counted; one in `sampleEvery` per op is timed, so the calls in between cost a
  // counter bump and no allocation (a timed call costs one closure and one promise more).
  const measured = <A, B, C, T>(op: string, run: (a: A, b: B, c: C) => Promise<T>) => {
    const count = ops.labels(op);
    const h = time.labels(op);
    let n = 0;
    return (a: A, b: B, c: C): Promise<T> => {
      count.inc();
      if (++n % sampleEvery !== 0) return run(a, b, c);
      const t = seconds();
      return run(a, b, c).then((v) => {
        h.observe(seconds() - t);
        return v;
      });
    };
  };
  const get = measured("get", (key: string) => store.get(key));
  const getMany = measured("getMany", (keys: readonly string[]) => store.getMany(keys));
  const put = measured("put", (key: string, value: unknown, options: PutOptions | undefined) =>
    store.put(key, value, options),
  );
  const del = measured("delete", (key: string, options: DeleteOptions | undefined) =>
    store.delete(key, options),
  );
  const list = measured("list", (prefix: string, options: ListOptions | undefined) =>
    store.list(prefix, options),
  );
  const wrapped: Store = {
    get: <T>(key: string) => get(key, undefined, undefined) as Promise<Entry<T> | undefined>,
    getMany: <T>(keys: readonly string[]) =>
      getMany(keys, undefined, undefined) as Promise<Map<string, Entry<T>>>,
    put: (key, value, options) => put(key, value, options),
    delete: (key, options) => del(key, options, undefined),
    list: <T>(prefix: string, options?: ListOptions) =>
      list(prefix, options, undefined) as Promise<ListPage<T>>,
  };
  if (isSyncReadable(store)) {
    const reads = ops.labels("readNow");
    const read = store[readNow].bind(store);
    Object.defineProperty(wrapped, readNow, {
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
    Object.defineProperty(wrapped, applyStagedWrites, {
      value: (writes: readonly StagedWrite[]) => {
        commits.inc();
        const t = seconds();
        apply(writes);
        h.observe(seconds() - t);
      },
    });
  }
  return wrapped;
}
