/** Where sessions read published resources from: a small port, with a Store-backed adapter. */
import type { ResourceChange } from "../push/flush.ts";
import { keys } from "../store/keys.ts";
import { listAll, type Store } from "../store/store.ts";
import type { StoredResource } from "./types.ts";

/** Published resources by type URL; what a session serves. Results are sorted by name. */
export interface ResourceSource {
  /** The named resources that exist; names that do not exist are simply absent. */
  get(typeUrl: string, names: readonly string[]): Promise<StoredResource[]>;
  /** Every resource of the type (a wildcard subscription). */
  list(typeUrl: string): Promise<StoredResource[]>;
}

/** A source told of each push, so the resources a push changed are read once for every stream. */
export interface PushedSource extends ResourceSource {
  /**
   * A push was announced with what it changed (undefined: not known). Until the next push, each
   * changed resource is read from the store once and that one read (shared, never to be mutated)
   * answers every stream; other names are read as before.
   */
  pushed(changes?: readonly ResourceChange[]): void;
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * A ResourceSource over keys.resource(typeUrl, name): one getMany per get, one paged listing per
 * list; the resources of the latest push are memoized (see PushedSource.pushed). A push's memo
 * holds only what it changed, so it is as small as the push. The store must be written only by
 * flushes that announce their push afterwards (Node: this process is the store's one writer), or
 * `pushed` never be called.
 */
export function createStoreSource(store: Store): PushedSource {
  // By type URL: the names the latest push changed, and what the store held for each once read
  // (null: absent).
  let changed = new Map<string, Set<string>>();
  let memo = new Map<string, Map<string, StoredResource | null>>();
  // A read that started before a push must not fill the next push's memo.
  let generation = 0;

  async function read(typeUrl: string, names: readonly string[]): Promise<StoredResource[]> {
    const found = await store.getMany<StoredResource>(names.map((n) => keys.resource(typeUrl, n)));
    return [...found.values()].map((e) => e.value);
  }

  return {
    async get(typeUrl, names) {
      if (names.length === 0) return [];
      const unique = names.length === 1 ? names : [...new Set(names)];
      const pushed = changed.get(typeUrl);
      if (!pushed) return (await read(typeUrl, unique)).sort(byName);
      let held = memo.get(typeUrl);
      const out: StoredResource[] = [];
      const toRead: string[] = [];
      for (const name of unique) {
        const hit = held?.get(name);
        if (hit === undefined) toRead.push(name);
        else if (hit) out.push(hit);
      }
      if (toRead.length > 0) {
        const started = generation;
        const fresh = await read(typeUrl, toRead);
        out.push(...fresh);
        if (started === generation) {
          const got = new Map(fresh.map((r) => [r.name, r]));
          for (const name of toRead) {
            if (!pushed.has(name)) continue;
            if (!held) {
              held = new Map();
              memo.set(typeUrl, held);
            }
            held.set(name, got.get(name) ?? null);
          }
        }
      }
      return out.sort(byName);
    },
    async list(typeUrl) {
      const entries = await listAll<StoredResource>(store, keys.resourcePrefix(typeUrl));
      return entries.map((e) => e.value).sort(byName);
    },
    pushed(changes) {
      generation++;
      changed = new Map();
      memo = new Map();
      for (const c of changes ?? []) {
        let names = changed.get(c.typeUrl);
        if (!names) {
          names = new Set();
          changed.set(c.typeUrl, names);
        }
        names.add(c.name);
      }
    },
  };
}
