/** Where sessions read published resources from: a small port, with a Store-backed adapter. */

import type { StoredResource } from "../resources/types.ts";
import { keys } from "../store/keys.ts";
import { listAll, type Store } from "../store/store.ts";

/** Published resources by type URL; what a session serves. Results are sorted by name. */
export interface ResourceSource {
  /** The named resources that exist; names that do not exist are simply absent. */
  get(typeUrl: string, names: readonly string[]): Promise<StoredResource[]>;
  /** Every resource of the type (a wildcard subscription). */
  list(typeUrl: string): Promise<StoredResource[]>;
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A ResourceSource over keys.resource(typeUrl, name): one getMany per get, one paged listing per list. */
export function createStoreSource(store: Store): ResourceSource {
  return {
    async get(typeUrl, names) {
      if (names.length === 0) return [];
      const unique = [...new Set(names)];
      const found = await store.getMany<StoredResource>(unique.map((n) => keys.resource(typeUrl, n)));
      return [...found.values()].map((e) => e.value).sort(byName);
    },
    async list(typeUrl) {
      const entries = await listAll<StoredResource>(store, keys.resourcePrefix(typeUrl));
      return entries.map((e) => e.value).sort(byName);
    },
  };
}
