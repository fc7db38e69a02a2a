/**
 * The flush lease (keys.flushing()): one flush publishes at a time over a store, whichever instance
 * runs it; a lease older than leaseMs is taken over, and one a failed flush left expired is taken at
 * once as recovered (flush.ts then re-announces everything).
 */
import { keys, type Store } from "../store/index.ts";

/** What a flush needs of its deps to hold the lease. */
export interface LeaseDeps {
  store: Store;
  now: () => number;
  /** How long a flush may hold the lease before another instance takes over (ms); default 30 s. */
  leaseMs?: number;
}

interface FlushLease {
  owner: string;
  at: number;
}

/**
 * After a flush that failed part-way: it may have published changes it never announced, so its
 * lease is left expired, not deleted. The next flush takes it over at once as recovered: it bumps
 * the push version and tells every stream to re-read (a retry alone would find nothing changed).
 * If even this write fails, the lease expires by its age.
 */
export async function expireLease(store: Store, version: number): Promise<void> {
  const failed: FlushLease = { owner: "failed", at: 0 };
  await store.put(keys.flushing(), failed, { ifVersion: version }).catch(() => undefined);
}

/** A lease this flush holds: its record and the store version it holds it at. */
export interface HeldLease {
  owner: string;
  at: number;
  version: number;
  recovered: boolean;
}

export async function acquireLease(deps: LeaseDeps): Promise<HeldLease | undefined> {
  const now = deps.now();
  const current = await deps.store.get<FlushLease>(keys.flushing());
  if (current && now - current.value.at < (deps.leaseMs ?? 30_000)) return undefined;
  const lease: FlushLease = { owner: crypto.randomUUID(), at: now };
  const put = await deps.store.put(keys.flushing(), lease, { ifVersion: current?.version ?? 0 });
  return put.ok ? { ...lease, version: put.version, recovered: current !== undefined } : undefined;
}

/**
 * Renews the lease once a third of leaseMs passed since it was taken or last renewed (checked
 * after each chunk), so a long flush over a slow shared store (a whole mesh on DynamoDB) is never
 * taken over by another instance while it still publishes. When another instance took it anyway
 * (this one was stalled past leaseMs), the flush stops: that one runs as recovered and re-announces all.
 */
export async function renewLease(deps: LeaseDeps, lease: HeldLease): Promise<void> {
  const now = deps.now();
  if (now - lease.at < (deps.leaseMs ?? 30_000) / 3) return;
  const renewed: FlushLease = { owner: lease.owner, at: now };
  const put = await deps.store.put(keys.flushing(), renewed, { ifVersion: lease.version });
  if (!put.ok)
    throw new Error(
      "flush: another instance took over the flush lease (this flush stalled past it); stopping",
    );
  lease.at = now;
  lease.version = put.version;
}
