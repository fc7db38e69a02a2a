/**
 * The heart of delta xDS, pure over a ResourceSource: given what a client subscribes to and
 * what it holds, which resources to send and which names to report removed. Used by the
 * stateful Delta ADS session and by the stateless Poll/Watch alike, so they cannot disagree.
 */

import type { StoredResource } from "../resources/types.ts";
import type { ResourceSource } from "./source.ts";

export interface DeltaSubscription {
  /** Every resource of the type, plus `names`. */
  wildcard: boolean;
  /** Explicitly subscribed names ("*" never among them). */
  names: ReadonlySet<string>;
}

export interface DeltaDiff {
  /** Resources the client does not hold at their current version, sorted by name (never mutated: may be `current` itself). */
  resources: readonly StoredResource[];
  /** Names the client holds that no longer exist (or are no longer in a wildcard's reach). */
  removed: readonly string[];
  /** Subscribed names that do not exist and the client does not hold. */
  missing: readonly string[];
}

/** What the client holds, name ─▶ version: a Map, or a view of one (delta.ts masks names to resend). */
export type Holdings = Pick<ReadonlyMap<string, string>, "get" | "has" | "keys">;

/**
 * Computes the diff. `held`: name ─▶ version the client has. Names held but not subscribed are
 * ignored. Without a wildcard the cost follows the subscribed names, never what the client holds.
 */
export async function diffForClient(
  source: ResourceSource,
  typeUrl: string,
  sub: DeltaSubscription,
  held: Holdings,
): Promise<DeltaDiff> {
  const named = sortedNames(sub.names);
  const current = sub.wildcard
    ? mergeByName(await source.list(typeUrl), named.length > 0 ? await source.get(typeUrl, named) : [])
    : await source.get(typeUrl, named);
  return diffCurrent(current, named, sub.wildcard, held);
}

/**
 * diffForClient's decision once the resources are read, pure and synchronous: `current` is what
 * exists of the subscription (every resource of the type when `wildcard`, else of `named`), sorted
 * by name; `named` the explicitly subscribed names, sorted (sortedNames).
 */
export function diffCurrent(
  current: readonly StoredResource[],
  named: readonly string[],
  wildcard: boolean,
  held: Holdings,
): DeltaDiff {
  const resources = notHeld(current, held);
  // Every named resource exists (a push's usual answer): nothing removed or missing, no set built.
  if (!wildcard && sameNames(current, named)) return { resources, removed: noNames, missing: noNames };
  const exists = new Set<string>();
  for (const r of current) exists.add(r.name);
  const gone = (n: string) => !exists.has(n);
  const removed = sortSmall(
    wildcard ? [...held.keys()].filter(gone) : named.filter((n) => held.has(n) && gone(n)),
  );
  const missing = named.filter((n) => !exists.has(n) && !held.has(n));
  return { resources, removed, missing };
}

const noNames: readonly string[] = Object.freeze([]);

/** The resources of `current` the client does not hold at their version: `current` itself when none is held (a push's usual answer). */
function notHeld(current: readonly StoredResource[], held: Holdings): readonly StoredResource[] {
  for (const r of current)
    if (held.get(r.name) === r.version) return current.filter((x) => held.get(x.name) !== x.version);
  return current;
}

/** Whether `current` holds exactly the resources `named` (both sorted by name), one each. */
function sameNames(current: readonly StoredResource[], named: readonly string[]): boolean {
  if (current.length !== named.length) return false;
  for (let i = 0; i < named.length; i++) if ((current[i] as StoredResource).name !== named[i]) return false;
  return true;
}

function mergeByName(a: StoredResource[], b: StoredResource[]): StoredResource[] {
  const byName = new Map<string, StoredResource>();
  for (const r of [...a, ...b]) byName.set(r.name, r);
  return [...byName.values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** The names sorted; one name (a push's usual reach) without the sort's own work array. */
export function sortedNames(names: ReadonlySet<string>): string[] {
  if (names.size === 1) for (const n of names) return [n];
  return [...names].sort();
}

/** Sorts `xs` in place (default order); none or one element without the sort's own work array. */
function sortSmall(xs: string[]): string[] {
  return xs.length > 1 ? xs.sort() : xs;
}
