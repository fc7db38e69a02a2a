/**
 * Records each proxy's xDS status under proxy/<node id> (bounded, see lib/xds/proxy-record.ts),
 * deletes it when the stream ends, keeps it fresh while the stream lives, sweeps records whose
 * process died, and logs every new NACK once with the proxy's text escaped.
 */

import { logError, logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import {
  isExpired,
  nodeIdProblem,
  type ProxyRecord,
  proxyRecord,
  proxyRecordTtlMs,
  type StatusReport,
} from "./proxy-record.ts";

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

/**
 * The interval over a shared store (EDGEPILOT_STORE=dynamodb): every write there is a billed
 * DynamoDB write, and the `proxy/` records share one partition key (about 1,000 writes a second):
 * at 1 s, 1,000 streams ACKing every push would throttle it and cost 3,600 writes per proxy-hour.
 * Ten seconds keeps both ten times lower; the record is still refreshed every third of its TTL.
 */
export const sharedProxyStatusWriteIntervalMs = 10_000;

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

/** The recorders of many streams (an ADS server's), sharing one write timer and one refresh timer. */
export interface ProxyStatusRecorders {
  /** A recorder for one more stream. */
  recorder(): ProxyStatusRecorder;
}

/**
 * Records written per turn of the shared timer: a thousand streams whose interval ended together
 * are written in slices, so one turn never holds the event loop for all of them.
 */
const writesPerTurn = 256;

/** One stream's recorder state (see createProxyStatusRecorders). */
interface Entry {
  streamId: string;
  /** When the recorder (its stream) began: the record's connectedAt. */
  connectedAt: number;
  lastNack: Map<string, string>;
  latest: StatusReport | undefined;
  /** The node id of the last record written: what close() deletes (checked by nodeIdProblem then). */
  written: string | undefined;
  /** A status came that is not written yet. */
  dirty: boolean;
  writing: Promise<void> | undefined;
  closed: boolean;
  lastWriteAt: number;
  /** A status waits for the shared timer to write it (in `waiting`, or at its place in `order`). */
  queued: boolean;
  /** The sequence number of its last write: its place in `order` (earlier places are stale). */
  seq: number;
  /** Its last write's place in `order` is still there (not walked past yet). */
  inOrder: boolean;
  /** In `live`: it has a status, so the shared refresh keeps its record fresh. */
  live: boolean;
}

/** A recorder for one stream (createProxyStatusRecorders with one recorder). */
export function createProxyStatusRecorder(options: ProxyStatusOptions): ProxyStatusRecorder {
  return createProxyStatusRecorders(options).recorder();
}

/**
 * Recorders for many streams. Per stream at most one write is in flight and one waits (the latest
 * status), and writes are at least minIntervalMs apart, so a proxy ACKing fast costs one store write
 * per interval (or per round trip), not one per ACK; the record is built only when written. A status
 * that finds its stream's interval over is written at once; one that comes sooner only marks the
 * stream, and ONE timer for all the streams writes every marked stream whose interval ended (an ACK
 * arms no timer of its own). While a stream lives its record is rewritten every third of the TTL
 * (one shared refresh timer), so only a dead process's records expire.
 */
export function createProxyStatusRecorders(options: ProxyStatusOptions): ProxyStatusRecorders {
  const { store, log } = options;
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? proxyRecordTtlMs;
  const minIntervalMs = options.minIntervalMs ?? 0;
  // Every write in the order it was made (`seqs`: each one's sequence number), from `head` on:
  // with one interval for all, that is the order their intervals end in, so the timer walks it
  // only as far as the first stream whose interval is not over, not over every waiting stream.
  let order: Entry[] = [];
  let seqs: number[] = [];
  let head = 0;
  let lastSeq = 0;
  // Streams waiting with no place in `order` (never written, or walked past: the refresh's).
  const waiting = new Set<Entry>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  // Streams with a status, for the refresh; its timer runs only while there are some.
  const live = new Set<Entry>();
  let refresh: ReturnType<typeof setInterval> | undefined;

  /** The shared timer fires at `at` (on `now`'s clock) or sooner. */
  function arm(at: number) {
    if (timer !== undefined && timerAt <= at) return;
    if (timer !== undefined) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(writeDue, Math.max(0, at - now()));
    (timer as { unref?: () => void }).unref?.();
  }

  /** Notes a write made now (`e.lastWriteAt`): its place in `order`; drops the places walked past. */
  function placed(e: Entry) {
    e.seq = ++lastSeq;
    e.inOrder = true;
    order.push(e);
    seqs.push(e.seq);
    // Places of streams that wait for nothing and whose interval is over go (the timer walks no further).
    while (head < order.length) {
      const first = order[head] as Entry;
      if (seqs[head] === first.seq) {
        if (first.queued || first.lastWriteAt + minIntervalMs > e.lastWriteAt) break;
        first.inOrder = false;
      }
      head++;
    }
    compact();
  }

  /** Drops the walked part of `order` once it is most of it. */
  function compact() {
    if (head < 1024 || head * 2 < order.length) return;
    order = order.slice(head);
    seqs = seqs.slice(head);
    head = 0;
  }

  /** Writes the waiting streams whose interval is over, a slice at a time; re-arms for the rest. */
  function writeDue() {
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
    const t = now();
    let next = Number.POSITIVE_INFINITY;
    let writes = 0;
    for (const e of waiting) {
      const at = e.lastWriteAt + minIntervalMs;
      if (at > t) {
        next = Math.min(next, at);
        continue;
      }
      if (writes === writesPerTurn) {
        next = t;
        break;
      }
      waiting.delete(e);
      e.queued = false;
      writes++;
      e.writing = drain(e);
    }
    // Then in write order, up to the first stream whose interval is not over (or the slice is full).
    while (next > t && head < order.length) {
      const e = order[head] as Entry;
      if (seqs[head] !== e.seq) {
        head++; // written again since: a later place holds it
        continue;
      }
      const at = e.lastWriteAt + minIntervalMs;
      if (at > t) {
        next = Math.min(next, at);
        break;
      }
      if (e.queued && writes === writesPerTurn) {
        next = t;
        break;
      }
      head++;
      e.inOrder = false;
      if (!e.queued) continue;
      e.queued = false;
      writes++;
      e.writing = drain(e);
    }
    compact();
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  }

  /** A status came (or the refresh wants one): written at once when the interval is over, else marked. */
  function schedule(e: Entry, atOnce: boolean) {
    e.dirty = true;
    if (e.writing || e.queued || e.closed) return;
    const at = e.lastWriteAt + minIntervalMs;
    if (atOnce && at <= now()) {
      e.writing = drain(e);
      return;
    }
    e.queued = true;
    // A stream whose last write still has its place in `order` waits there (the timer reaches it in turn).
    if (!e.inOrder) waiting.add(e);
    arm(at);
  }

  function startRefresh() {
    // A sixth of the TTL: each record is rewritten between a third and half of the TTL after its last write.
    refresh = setInterval(() => {
      const stale = now() - ttlMs / 3;
      for (const e of live) if (e.lastWriteAt <= stale) schedule(e, false);
    }, ttlMs / 6);
    (refresh as { unref?: () => void }).unref?.();
  }

  async function drain(e: Entry): Promise<void> {
    const { latest } = e;
    const status =
      e.dirty && !e.closed && latest ? (typeof latest === "function" ? latest() : latest) : undefined;
    e.dirty = false;
    // Streams refuse bad node ids before a session sees them; this guards the key all the same
    // (the id last written passed already: a stream's node id rarely changes).
    if (status && status.nodeId !== "" && (status.nodeId === e.written || !nodeIdProblem(status.nodeId))) {
      e.lastWriteAt = now();
      placed(e);
      const record = proxyRecord(status, {
        streamId: e.streamId,
        now: e.lastWriteAt,
        ttlMs,
        connectedAt: e.connectedAt,
      });
      e.written = record.nodeId;
      try {
        await store.put(keys.proxy(record.nodeId), record);
      } catch (err) {
        logError(log, `xds: could not record the status of ${logSafe(record.nodeId)}: ${logSafe(err)}`);
      }
    }
    e.writing = undefined;
    if (e.dirty) schedule(e, true);
  }

  /** Takes a status to write: the stream now has one, so the refresh keeps it fresh. */
  function take(e: Entry, status: StatusReport) {
    e.latest = status;
    if (!e.live) {
      e.live = true;
      live.add(e);
      if (refresh === undefined) startRefresh();
    }
    schedule(e, true);
  }

  function recorder(): ProxyStatusRecorder {
    const e: Entry = {
      streamId: crypto.randomUUID(),
      connectedAt: now(),
      lastNack: new Map(),
      latest: undefined,
      written: undefined,
      dirty: false,
      writing: undefined,
      closed: false,
      lastWriteAt: Number.NEGATIVE_INFINITY,
      queued: false,
      seq: 0,
      inOrder: false,
      live: false,
    };
    return {
      record(status) {
        if (e.closed) return;
        if (typeof status === "function") {
          take(e, status);
          return;
        }
        for (const t of status.types) {
          if (!t.nack || e.lastNack.get(t.typeUrl) === t.nack.nonce) continue;
          e.lastNack.set(t.typeUrl, t.nack.nonce);
          logWarn(
            log,
            `xds: ${status.nodeId ? logSafe(status.nodeId) : "(no node id)"} NACKed ${logSafe(t.typeUrl)} ` +
              `(kept ${t.nack.versionInfo ? logSafe(t.nack.versionInfo) : "nothing"}): ${logSafe(t.nack.message)}`,
          );
        }
        // Streams refuse bad node ids before a session sees them; this guards the key all the same.
        if (status.nodeId === "" || nodeIdProblem(status.nodeId)) return;
        take(e, status);
      },
      async close() {
        e.closed = true;
        // A closed stream is never written again; its place in `order` may outlive it until the
        // timer walks past, so the entry lets go of the status read (and the session behind it).
        e.latest = undefined;
        if (e.queued) waiting.delete(e);
        e.queued = false;
        if (live.delete(e) && live.size === 0 && refresh !== undefined) {
          clearInterval(refresh);
          refresh = undefined;
        }
        await e.writing;
        const { written } = e;
        if (written === undefined) return;
        const key = keys.proxy(written);
        try {
          const entry = await store.get<ProxyRecord>(key);
          // Another stream of the same proxy (a reconnect) may own the record by now: leave it.
          if (entry?.value.streamId === e.streamId) await store.delete(key, { ifVersion: entry.version });
        } catch (err) {
          logError(log, `xds: could not delete the status of ${logSafe(written)}: ${logSafe(err)}`);
        }
      },
    };
  }

  return { recorder };
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
      (err) => logWarn(options.log, `xds: proxy status sweep failed: ${logSafe(err)}`),
    );
  sweep();
  const timer = setInterval(sweep, options.intervalMs ?? proxyRecordTtlMs / 3);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
