/** A memory store that counts puts, for the proxy status tests that bound how often a record is written. */
import type { Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

/** A fresh memory store whose `puts()` says how many puts it took. */
export function countingStore(): Store & { puts: () => number } {
  const store = createMemoryStore();
  let puts = 0;
  return {
    ...store,
    put(key, value, options) {
      puts++;
      return store.put(key, value, options);
    },
    puts: () => puts,
  };
}
