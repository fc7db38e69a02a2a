/**
 * Answering a push from the push itself: a ResourceSource that serves the names a push changed
 * from its change feed (flush.ts ResourceChange: version and encoded bytes), and reads the store
 * only for what the feed does not carry. The bytes are the flush's, shared by every stream.
 */
import type { ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import type { ResourceSource } from "./source.ts";

/** The published resource a change carries (an upsert from flush()), else undefined. */
export function publishedBy(change: ResourceChange): StoredResource | undefined {
  if (change.version === null || change.body === undefined || change.service === undefined) return undefined;
  // Every StoredResource field is present and of its type: the change is the resource, not a copy.
  return change as StoredResource;
}

/** Indexes already built, per changes array: every stream handed the same push shares one. */
const indexes = new WeakMap<
  readonly ResourceChange[],
  ReadonlyMap<string, ReadonlyMap<string, ResourceChange>>
>();

/**
 * The last change of each name, per type URL (pushes coalesced in order: the last one wins). Built
 * once per changes array (the array and its changes are never mutated: lib/push/signal.ts), so a
 * push reaching 1,000 streams indexes its changes once.
 */
export function indexChanges(
  changes: readonly ResourceChange[],
): ReadonlyMap<string, ReadonlyMap<string, ResourceChange>> {
  let index = indexes.get(changes);
  if (index === undefined) {
    index = buildIndex(changes);
    indexes.set(changes, index);
  }
  return index;
}

function buildIndex(changes: readonly ResourceChange[]): Map<string, Map<string, ResourceChange>> {
  const byType = new Map<string, Map<string, ResourceChange>>();
  for (const c of changes) {
    const names = byType.get(c.typeUrl) ?? new Map<string, ResourceChange>();
    byType.set(c.typeUrl, names);
    names.set(c.name, c);
  }
  return byType;
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * `source` as of a push: a name the push removed does not exist, a name it published is the
 * change's resource, anything else (or a change without bytes) is read from `source`.
 * list() is `source`'s (a wildcard re-read is never answered from a feed).
 */
export function changeSource(
  source: ResourceSource,
  changes: ReadonlyMap<string, ReadonlyMap<string, ResourceChange>>,
): ResourceSource {
  return {
    async get(typeUrl, names) {
      const changed = changes.get(typeUrl);
      if (!changed) return source.get(typeUrl, names);
      const found: StoredResource[] = [];
      const rest: string[] = [];
      for (const name of names.length > 1 ? new Set(names) : names) {
        const c = changed.get(name);
        const published = c && publishedBy(c);
        if (published) found.push(published);
        else if (!c || c.version !== null) rest.push(name);
      }
      if (rest.length > 0) found.push(...(await source.get(typeUrl, rest)));
      return found.length > 1 ? found.sort(byName) : found;
    },
    list: (typeUrl) => source.list(typeUrl),
  };
}

/**
 * changeSource's get without a promise, for names the push itself answers (`changed`: the push's
 * changes of their type, from indexChanges): the resources of `names` (sorted, unique) that exist as of the push, sorted by name, or undefined when one of
 * them needs the store (a name the push did not change, or a change that carries no bytes).
 */
export function changedNow(
  changed: ReadonlyMap<string, ResourceChange> | undefined,
  names: readonly string[],
): StoredResource[] | undefined {
  if (!changed) return names.length === 0 ? [] : undefined;
  const found: StoredResource[] = [];
  for (const name of names) {
    const c = changed.get(name);
    if (c === undefined) return undefined;
    const published = publishedBy(c);
    if (published) found.push(published);
    else if (c.version !== null) return undefined;
  }
  return found;
}
