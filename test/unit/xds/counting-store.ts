/** A memory store that counts puts, for the tests that bound how often a record is written. */
import type { Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

/** A fresh memory store whose `puts()` says how many puts it took, and `putsTo(key)` how many to one key. */
export function countingStore(): Store & { puts: () => number; putsTo: (key: string) => number } {
  const store = createMemoryStore();
  let puts = 0;
  const byKey = new Map<string, number>();
  return {
    ...store,
    put(key, value, options) {
      puts++;
      byKey.set(key, (byKey.get(key) ?? 0) + 1);
      return store.put(key, value, options);
    },
    puts: () => puts,
    putsTo: (key) => byKey.get(key) ?? 0,
  };
}
