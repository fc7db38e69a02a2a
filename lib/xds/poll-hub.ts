/**
 * Wakes open Watch streams and waiting long polls when a push changes something they care
 * about. Whoever runs the debounce (the Node timer, the MeshStore alarm) publishes each flush's
 * changes; every listener woken by one push recomputes from one shared, lazily filled snapshot
 * of the store, so a push that reaches N streams reads each resource once, not N times.
 */
import type { Push } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import type { ResourceSource } from "./source.ts";

/** One resource a push changed (flush.ts's ResourceChange fits). */
export interface ChangedResource {
  typeUrl: string;
  name: string;
  /** Set when the change concerns one namespace's view only (flush.ts ResourceChange.view). */
  view?: string;
}

/** A listener's interest: true for a change it must recompute on. */
export type Interest = (change: ChangedResource) => boolean;

/** One listener: a Watch stream or a waiting poll. */
export interface PushListener {
  /**
   * Resolves once a push this listener cares about has arrived since it started listening or
   * since the last call (at once if one already has; several coalesce into one), with the source
   * to recompute from; resolves undefined when `signal` aborts first.
   */
  next(signal: AbortSignal): Promise<ResourceSource | undefined>;
  /** Stops listening; idempotent. */
  close(): void;
}

/** The fan-out point between the debounce and the open streams of one instance. */
export interface PollHub {
  /**
   * Announces a push; its `changes` undefined means anything may have changed (wakes every
   * listener). A refresh push (Push.refresh) also wakes the listeners whose `onRefresh` says so.
   */
  publish(push: Pick<Push, "refresh"> & { changes?: readonly ChangedResource[] }): void;
  /** Starts listening: no push published from now on is missed. */
  listen(interest: Interest, onRefresh?: () => boolean): PushListener;
  /** Listeners attached. */
  readonly size: number;
  /** Listeners blocked in next(), waiting for a push (the rest are computing or sending). */
  readonly waiting: number;
}

interface Slot {
  interest: Interest;
  onRefresh: (() => boolean) | undefined;
  pending: boolean;
  wake: (() => void) | undefined;
}

/** A hub over `source`: listeners get per-push snapshots of it. */
export function createPollHub(source: ResourceSource): PollHub {
  const slots = new Set<Slot>();
  let snapshot: ResourceSource = createSnapshotSource(source);
  return {
    publish({ changes, refresh }) {
      snapshot = createSnapshotSource(source);
      for (const slot of slots) {
        if (changes !== undefined && !changes.some(slot.interest) && !(refresh && slot.onRefresh?.()))
          continue;
        slot.pending = true;
        slot.wake?.();
      }
    },
    listen(interest, onRefresh) {
      const slot: Slot = { interest, onRefresh, pending: false, wake: undefined };
      slots.add(slot);
      return {
        async next(signal) {
          while (!slot.pending) {
            if (signal.aborted || !slots.has(slot)) return undefined;
            await new Promise<void>((resolve) => {
              const done = () => {
                signal.removeEventListener("abort", done);
                slot.wake = undefined;
                resolve();
              };
              slot.wake = done;
              signal.addEventListener("abort", done);
            });
          }
          slot.pending = false;
          return snapshot;
        },
        close() {
          slots.delete(slot);
          slot.wake?.();
        },
      };
    },
    get size() {
      return slots.size;
    },
    get waiting() {
      let n = 0;
      for (const slot of slots) if (slot.wake) n++;
      return n;
    },
  };
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * A ResourceSource that reads each type listing and each named resource from `source` at most
 * once (concurrent callers share the read; a failed read is forgotten so the next call retries).
 */
export function createSnapshotSource(source: ResourceSource): ResourceSource {
  const lists = new Map<string, Promise<Map<string, StoredResource>>>();
  const named = new Map<string, Promise<StoredResource | undefined>>();
  const key = (typeUrl: string, name: string) => `${typeUrl}\n${name}`;
  const listed = (typeUrl: string) => {
    let p = lists.get(typeUrl);
    if (!p) {
      p = source.list(typeUrl).then((rs) => new Map(rs.map((r) => [r.name, r])));
      p.catch(() => lists.delete(typeUrl));
      lists.set(typeUrl, p);
    }
    return p;
  };
  return {
    async list(typeUrl) {
      return [...(await listed(typeUrl)).values()].sort(byName);
    },
    async get(typeUrl, names) {
      const unique = [...new Set(names)];
      const all = lists.get(typeUrl);
      if (all) {
        const m = await all;
        return unique.flatMap((n) => m.get(n) ?? []).sort(byName);
      }
      const unread = unique.filter((n) => !named.has(key(typeUrl, n)));
      if (unread.length > 0) {
        const batch = source.get(typeUrl, unread).then((rs) => new Map(rs.map((r) => [r.name, r])));
        batch.catch(() => {
          for (const n of unread) named.delete(key(typeUrl, n));
        });
        for (const n of unread)
          named.set(
            key(typeUrl, n),
            batch.then((m) => m.get(n)),
          );
      }
      const found = await Promise.all(unique.map((n) => named.get(key(typeUrl, n))));
      return found.filter((r): r is StoredResource => r !== undefined).sort(byName);
    },
  };
}
