/**
 * The Durable Object store adapter bounds what one RPC carries: getMany asks the object for at
 * most MAX_LIST_LIMIT keys per call (duplicates once), so the object never encodes a whole
 * request's values at once. Over serveStoreRpc on the memory store, calls counted.
 */
import { describe, expect, it } from "vitest";
import { createDurableObjectStore, type StoreRpc, serveStoreRpc } from "../../../lib/store/durable-object.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { MAX_LIST_LIMIT } from "../../../lib/store/sql.ts";

/** A StoreRpc over a memory store that records the size of each getMany call. */
function countingRpc() {
  const rpc = serveStoreRpc(createMemoryStore());
  const calls: number[] = [];
  const counted: StoreRpc = {
    ...rpc,
    storeGetMany(keys) {
      calls.push(keys.length);
      return rpc.storeGetMany(keys);
    },
  };
  return { store: createDurableObjectStore(counted), calls };
}

describe("durable object store getMany", () => {
  it.each([
    { keys: 0, stored: 0, calls: [] },
    { keys: 3, stored: 2, calls: [3] },
    { keys: MAX_LIST_LIMIT, stored: MAX_LIST_LIMIT, calls: [MAX_LIST_LIMIT] },
    { keys: 2 * MAX_LIST_LIMIT + 500, stored: 2000, calls: [MAX_LIST_LIMIT, MAX_LIST_LIMIT, 500] },
  ])("$keys keys ($stored stored): calls of $calls keys", async ({ keys, stored, calls }) => {
    const { store, calls: seen } = countingRpc();
    const names = Array.from({ length: keys }, (_, i) => `k/${String(i).padStart(5, "0")}`);
    for (const key of names.slice(0, stored)) await store.put(key, { key });
    const found = await store.getMany<{ key: string }>([...names, ...names.slice(0, 10)]);
    expect(seen).toEqual(calls);
    expect([...found.keys()].sort()).toEqual(names.slice(0, stored));
    for (const [key, entry] of found) expect(entry.value).toEqual({ key });
  });
});
