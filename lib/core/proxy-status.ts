/**
 * Records each proxy's xDS status under proxy/<node id> (bounded, see lib/xds/proxy-record.ts),
 * deletes it when the stream ends, keeps it fresh while the stream lives, sweeps records whose
 * process died, and logs every new NACK once with the proxy's text escaped.
 */
import { logSafe } from "../log-safe.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import {
  isExpired,
  nodeIdProblem,
  type ProxyRecord,
  proxyRecord,
  proxyRecordTtlMs,
  type StatusReport,
} from "../xds/proxy-record.ts";

export interface ProxyStatusOptions {
  store: Store;
  log: (line: string) => void;
  /** Wall clock (ms since the epoch); records carry expiry times other instances read. */
  now?: () => number;
  ttlMs?: number;
  /**
   * Least time between two writes of the record (ms, on `now`'s clock); default 0: each write
   * follows the last at once. A status that changes sooner is written when the interval is over
   * (the latest one), so a stream costs at most one store write per interval, whatever its ACKs.
   */
  minIntervalMs?: number;
}

/** The interval the xDS streams use: a status page a second behind costs one write per second per proxy. */
export const proxyStatusWriteIntervalMs = 1000;

/** The status sink of one stream. */
export interface ProxyStatusRecorder {
  /**
   * Takes the stream's status after an ACK or NACK; writes coalesce, failures are logged, never
   * thrown. A status read (a function) is called only when a write is due, so an ACK costs no
   * status; a NACK comes as the status itself, so its message is logged at once.
   */
  record(status: StatusReport): void;
  /** The stream ended: stop refreshing and delete the record if this stream still owns it. */
  close(): Promise<void>;
}

/**
 * A recorder for one stream. At most one write is in flight and one waits (the latest status),
 * so a proxy ACKing fast costs one store write per round trip (or per minIntervalMs), not one per
 * ACK; the record is built only when written. While the stream
 * lives its record is rewritten every third of the TTL, so only a dead process's records expire.
 */
export function createProxyStatusRecorder(options: ProxyStatusOptions): ProxyStatusRecorder {
  const { store, log } = options;
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? proxyRecordTtlMs;
  const streamId = crypto.randomUUID();
  const lastNack = new Map<string, string>();
  let latest: StatusReport | undefined;
  // The node id of the last record written: what close() deletes.
  let written: string | undefined;
  let dirty = false;
  let writing: Promise<void> | undefined;
  let closed = false;
  const minIntervalMs = options.minIntervalMs ?? 0;
  let lastWriteAt = Number.NEGATIVE_INFINITY;
  let wait: ReturnType<typeof setTimeout> | undefined;
  // Started by the first status, so a stream refused before any ACK holds no timer.
  let refresh: ReturnType<typeof setInterval> | undefined;
  const startRefresh = () => {
    refresh = setInterval(() => {
      if (latest) schedule();
    }, ttlMs / 3);
    (refresh as { unref?: () => void }).unref?.();
  };

  function schedule() {
    dirty = true;
    if (writing || wait || closed) return;
    const early = lastWriteAt + minIntervalMs - now();
    if (early <= 0) {
      writing = drain();
      return;
    }
    wait = setTimeout(() => {
      wait = undefined;
      schedule();
    }, early);
    (wait as { unref?: () => void }).unref?.();
  }
  async function drain(): Promise<void> {
    const status =
      dirty && !closed && latest ? (typeof latest === "function" ? latest() : latest) : undefined;
    dirty = false;
    // Streams refuse bad node ids before a session sees them; this guards the key all the same.
    if (status && status.nodeId !== "" && !nodeIdProblem(status.nodeId)) {
      lastWriteAt = now();
      const record = proxyRecord(status, { streamId, now: lastWriteAt, ttlMs });
      written = record.nodeId;
      try {
        await store.put(keys.proxy(record.nodeId), record);
      } catch (err) {
        log(`xds: could not record the status of ${logSafe(record.nodeId)}: ${logSafe(err)}`);
      }
    }
    writing = undefined;
    if (dirty) schedule();
  }

  return {
    record(status) {
      if (closed) return;
      if (typeof status === "function") {
        latest = status;
        if (!refresh) startRefresh();
        schedule();
        return;
      }
      for (const t of status.types) {
        if (!t.nack || lastNack.get(t.typeUrl) === t.nack.nonce) continue;
        lastNack.set(t.typeUrl, t.nack.nonce);
        log(
          `xds: ${status.nodeId ? logSafe(status.nodeId) : "(no node id)"} NACKed ${logSafe(t.typeUrl)} ` +
            `(kept ${t.nack.versionInfo ? logSafe(t.nack.versionInfo) : "nothing"}): ${logSafe(t.nack.message)}`,
        );
      }
      // Streams refuse bad node ids before a session sees them; this guards the key all the same.
      if (status.nodeId === "" || nodeIdProblem(status.nodeId)) return;
      latest = status;
      if (!refresh) startRefresh();
      schedule();
    },
    async close() {
      closed = true;
      if (refresh) clearInterval(refresh);
      if (wait) clearTimeout(wait);
      await writing;
      if (written === undefined) return;
      const key = keys.proxy(written);
      try {
        const entry = await store.get<ProxyRecord>(key);
        // Another stream of the same proxy (a reconnect) may own the record by now: leave it.
        if (entry?.value.streamId === streamId) await store.delete(key, { ifVersion: entry.version });
      } catch (err) {
        log(`xds: could not delete the status of ${logSafe(written)}: ${logSafe(err)}`);
      }
    },
  };
}

/** Deletes every proxy record that expired (its process died); returns how many went. */
export async function sweepProxyStatus(store: Store, now: number): Promise<number> {
  let removed = 0;
  for (const entry of await listAll(store, keys.proxyPrefix())) {
    if (isExpired(entry.value, now) && (await store.delete(entry.key, { ifVersion: entry.version })))
      removed++;
  }
  return removed;
}

/** Sweeps at once and then every `intervalMs` (default a third of the TTL); returns the stop function. */
export function startProxyStatusSweep(options: {
  store: Store;
  log: (line: string) => void;
  now?: () => number;
  intervalMs?: number;
}): () => void {
  const now = options.now ?? Date.now;
  const sweep = () =>
    void sweepProxyStatus(options.store, now()).then(
      (n) => {
        if (n > 0) options.log(`xds: removed ${n} expired proxy status record(s)`);
      },
      (err) => options.log(`xds: proxy status sweep failed: ${logSafe(err)}`),
    );
  sweep();
  const timer = setInterval(sweep, options.intervalMs ?? proxyRecordTtlMs / 3);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
