/**
 * The ingest lease: ingest batches serialized across every core over one shared store, so two
 * instances applying batches at once give exactly the outcome of some serial order.
 *
 * Why a lease and not optimistic concurrency: a batch reads many keys (object records, shards,
 * indexes) and writes many, and the Store port has compare-and-set on one item only (no
 * transactions: DynamoDB's TransactWriteItems is capped at 100 items and dynalite lacks it). A
 * batch cannot check at commit that nothing it read changed, so its reads and its commit must run
 * while no other batch commits: one item, keys.ingestLease(), names the holder and when its hold
 * expires. It is taken by compare-and-set (absent: ifVersion 0; expired: ifVersion of the expired
 * one), renewed by compare-and-set every ttlMs/3 while the batch runs and right before the commit
 * unless renewed within ttlMs/3 (so a commit starts with at least 2/3 of ttlMs ahead of it, and a
 * short batch costs a get, a put and a delete), and released by a conditional
 * delete. A holder that died (kill -9, a Lambda timeout) is taken over once its hold expired; a
 * holder whose batch failed releases by expiring it. Whoever takes over an expired hold runs
 * `onTakeover` (the core: the sync tracker looks for the commit marker keys.commitMarker() the
 * dead holder left mid-commit, and begins a new state lifetime if so, as a restart does).
 *
 * The one case this cannot make exact: a holder paused longer than ttlMs (a stopped process) that
 * wakes mid-commit after another took over. Its renewal then fails and the batch stops before its
 * commit when it can; mid-commit the marker it left makes the next takeover begin a new lifetime.
 *
 * A batch that finds the lease held waits with jittered exponential backoff and gives up after
 * maxWaitMs with an IngestBusyError (the HTTP edge answers 503 with Retry-After).
 */
import { logSafe } from "../log-safe.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { Timers } from "../timers.ts";

/** What keys.ingestLease() holds. */
export interface IngestLeaseRecord {
  /** The holder: a random id per batch. */
  owner: string;
  /** When the hold ends unless renewed (ms since epoch, the holders' clocks). */
  expiresAt: number;
}

/** Options of createIngestLease. */
export interface IngestLeaseOptions {
  store: Store;
  timers: Timers;
  /** How long a hold lasts unless renewed (ms); default 30 s. */
  ttlMs?: number;
  /** How long a batch waits for the lease before it gives up (ms); default 10 s. */
  maxWaitMs?: number;
  /** First backoff delay (ms), doubled per attempt up to maxBackoffMs; default 20. */
  backoffMs?: number;
  /** Longest backoff delay (ms); default 500. */
  maxBackoffMs?: number;
  /** [0, 1) for the jitter; default Math.random. */
  random?: () => number;
  /** Run after taking over an expired hold, before the batch: recover what its holder left. */
  onTakeover?: () => Promise<void>;
  /** A new owner id; default crypto.randomUUID(). */
  newId?: () => string;
}

/** What a batch holding the lease can do. */
export interface HeldLease {
  /** Renews the hold now; throws IngestLeaseLostError when another writer took it. */
  renew(): Promise<void>;
  /**
   * Before the commit: renews unless the hold was taken or renewed less than ttlMs/3 ago (then
   * it holds for at least 2/3 of ttlMs more, and nobody can have taken it); throws like renew().
   */
  beforeCommit(): Promise<void>;
}

/** Runs batches one at a time across every core over the store. */
export interface IngestLease {
  /** Takes the lease (waiting), runs `batch`, releases it; throws IngestBusyError after maxWaitMs. */
  run<T>(batch: (held: HeldLease) => Promise<T>): Promise<T>;
}

/** Gave up waiting for the ingest lease: nothing of the call was applied; retry later (HTTP 503). */
export class IngestBusyError extends Error {
  constructor(
    message: string,
    /** When to retry (seconds), for Retry-After. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "IngestBusyError";
  }
}

/** The hold expired and another writer took it before this batch committed: nothing was applied. */
export class IngestLeaseLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IngestLeaseLostError";
  }
}

/** Builds the lease over `options.store`. */
export function createIngestLease(options: IngestLeaseOptions): IngestLease {
  const { store, timers } = options;
  const ttlMs = options.ttlMs ?? 30_000;
  const maxWaitMs = options.maxWaitMs ?? 10_000;
  const random = options.random ?? Math.random;
  const newId = options.newId ?? (() => crypto.randomUUID());
  const sleep = (ms: number) => new Promise<void>((resolve) => timers.setTimeout(resolve, ms));

  /** One attempt: the version held, or what holds it now. */
  async function take(owner: string): Promise<{ version: number } | { held: IngestLeaseRecord }> {
    const current = await store.get<IngestLeaseRecord>(keys.ingestLease());
    const now = timers.now();
    if (current && current.value.expiresAt > now) return { held: current.value };
    const record: IngestLeaseRecord = { owner, expiresAt: now + ttlMs };
    const put = await store.put(keys.ingestLease(), record, { ifVersion: current?.version ?? 0 });
    if (!put.ok) return { held: (put.current?.value as IngestLeaseRecord | undefined) ?? record };
    if (current) await options.onTakeover?.();
    return { version: put.version };
  }

  async function acquire(owner: string): Promise<number> {
    const started = timers.now();
    let delay = options.backoffMs ?? 20;
    for (;;) {
      const got = await take(owner);
      if ("version" in got) return got.version;
      const waited = timers.now() - started;
      if (waited >= maxWaitMs) {
        const left = Math.max(0, got.held.expiresAt - timers.now());
        throw new IngestBusyError(
          `ingest: another instance holds the store's ingest lease (holder ${logSafe(got.held.owner)}, ` +
            `its hold ends in ${left} ms unless renewed); gave up after waiting ${waited} ms: nothing applied, retry`,
          Math.max(1, Math.ceil(Math.min(left, maxWaitMs) / 1000)),
        );
      }
      // Full jitter: writers that collided spread out instead of retrying in step.
      await sleep(Math.max(1, Math.floor(random() * Math.min(delay, maxWaitMs - waited))));
      delay = Math.min(delay * 2, options.maxBackoffMs ?? 500);
    }
  }

  return {
    async run(batch) {
      const owner = newId();
      let version = await acquire(owner);
      let renewedAt = timers.now();
      let lost: Error | undefined;
      let renewing: Promise<void> | undefined;
      const renew = async () => {
        if (lost) throw lost;
        const at = timers.now();
        const record: IngestLeaseRecord = { owner, expiresAt: at + ttlMs };
        const put = await store.put(keys.ingestLease(), record, { ifVersion: version });
        if (put.ok) {
          version = put.version;
          renewedAt = at;
          return;
        }
        lost = new IngestLeaseLostError(
          `ingest: the store's ingest lease expired and another instance took it before this batch committed; nothing applied, retry`,
        );
        throw lost;
      };
      // The heartbeat: renews every ttlMs/3 while the batch runs (a renewal in flight is awaited by the next).
      let timer: unknown;
      let done = false;
      const beat = () => {
        if (done) return;
        timer = timers.setTimeout(() => {
          renewing = (renewing ?? Promise.resolve())
            .then(renew)
            .catch(() => undefined)
            .then(beat);
        }, ttlMs / 3);
      };
      beat();
      let ok = false;
      try {
        const result = await batch({
          renew: async () => {
            await renewing;
            await renew();
          },
          beforeCommit: async () => {
            await renewing;
            if (lost) throw lost;
            if (timers.now() - renewedAt >= ttlMs / 3) await renew();
          },
        });
        ok = true;
        return result;
      } finally {
        done = true;
        timers.clearTimeout(timer);
        await renewing;
        // A release that fails leaves the hold to expire: the batch's own outcome stands.
        if (!lost) await release(store, version, ok).catch(() => undefined);
      }
    },
  };
}

/**
 * Gives the lease back: deleted after a batch that succeeded; after one that failed, left expired,
 * so the next taker runs onTakeover (a commit cut short may have left its marker).
 */
async function release(store: Store, version: number, ok: boolean): Promise<void> {
  if (ok) {
    await store.delete(keys.ingestLease(), { ifVersion: version });
    return;
  }
  const expired: IngestLeaseRecord = { owner: "failed", expiresAt: 0 };
  await store.put(keys.ingestLease(), expired, { ifVersion: version }).catch(() => undefined);
}
