/**
 * Records a NACK carried by a Poll or Watch request (PollRequest.request.error_detail) in the
 * node's proxy status, as an ADS stream's NACK is recorded (proxy-status.ts): the same bounded
 * record under keys.proxy(node id), the same log line, once. Poll is stateless, so "once" is
 * decided against what is stored: the same node, type and (bounded) message already recorded ▶
 * no write and no log line. A record an ADS stream owns keeps its owner and other types; a
 * record written here belongs to no stream and expires by its TTL (the sweep deletes it).
 */

import { logError, logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import type { ProxyTypeStatus } from "../resources/types.ts";
import { keys, type Store } from "../store/index.ts";
import type { PollNackReport } from "./poll-request.ts";
import { isExpired, type ProxyRecord, proxyRecord, proxyRecordTtlMs, recordBounds } from "./proxy-record.ts";

/** The owner named by records written here: no stream owns them, so none deletes them at its end. */
export const pollNackStreamId = "poll";

export interface PollNackRecorderOptions {
  store: Store;
  log: (line: string) => void;
  /** Wall clock (ms since the epoch), as proxy-status.ts's. */
  now?: () => number;
  ttlMs?: number;
}

/** Records one NACK; resolves when written (or found already there); failures are logged, never thrown. */
export type PollNackRecorder = (nack: PollNackReport) => Promise<void>;

/** A recorder over `store`: at most one store write per distinct NACK, none for a repeat. */
export function createPollNackRecorder(options: PollNackRecorderOptions): PollNackRecorder {
  const { store, log } = options;
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? proxyRecordTtlMs;
  // Identical NACKs arriving together are written once: the second finds the first in flight.
  const inFlight = new Set<string>();
  return async (nack) => {
    if (nack.nodeId === "") {
      logWarn(log, logLine(nack));
      return;
    }
    const at = now();
    const fresh = proxyRecord(
      { nodeId: nack.nodeId, generator: nack.generator, types: [typeStatus(nack)] },
      { streamId: pollNackStreamId, now: at, ttlMs },
    );
    const mine = fresh.types[0] as ProxyRecord["types"][number];
    const flight = `${nack.nodeId}\n${nack.typeUrl}\n${mine.nack?.message}`;
    if (inFlight.has(flight)) return;
    inFlight.add(flight);
    const key = keys.proxy(nack.nodeId);
    try {
      const entry = await store.get<ProxyRecord>(key);
      const stored = entry && !isExpired(entry.value, at) ? entry.value : undefined;
      const had = stored?.types.find((t) => t.typeUrl === mine.typeUrl);
      if (had?.nack && had.nack.message === mine.nack?.message) return;
      logWarn(log, logLine(nack));
      const types =
        had && stored
          ? stored.types.map((t) => (t === had ? { ...t, nack: mine.nack } : t))
          : [...(stored?.types ?? []), mine];
      const record: ProxyRecord = stored
        ? {
            ...stored,
            updatedAt: at,
            expiresAt: Math.max(stored.expiresAt, fresh.expiresAt),
            types: types.slice(0, recordBounds.types),
            typesOmitted: stored.typesOmitted + Math.max(0, types.length - recordBounds.types),
          }
        : fresh;
      // Conditional: a stream's write in between wins (it is the live truth); this NACK is logged.
      await store.put(key, record, { ifVersion: entry?.version ?? 0 });
    } catch (err) {
      logError(log, `xds: could not record the NACK of ${logSafe(nack.nodeId)}: ${logSafe(err)}`);
    } finally {
      inFlight.delete(flight);
    }
  };
}

/**
 * For a host that keeps no proxy status (the Worker: no ADS streams there, and no sweep of
 * expired records in the Durable Object): logs each distinct NACK once. "Once" is remembered for
 * the last `remember` (node, type) pairs in memory, so a client repeating its NACK costs no line.
 */
export function createPollNackLogger(log: (line: string) => void, remember = 1024): PollNackRecorder {
  const last = new Map<string, string>();
  return async (nack) => {
    const key = `${nack.nodeId}\n${nack.typeUrl}`;
    if (last.get(key) === nack.message) return;
    last.delete(key);
    last.set(key, nack.message);
    if (last.size > remember) last.delete(last.keys().next().value as string);
    logWarn(log, logLine(nack));
  };
}

/** The line proxy-status.ts writes for an ADS NACK, with what a poll says it kept. */
function logLine(n: PollNackReport): string {
  return (
    `xds: ${n.nodeId ? logSafe(n.nodeId) : "(no node id)"} NACKed ${logSafe(n.typeUrl)} ` +
    `(kept ${n.kept === 0 ? "nothing" : `${n.kept} resource(s)`}, over Poll/Watch): ${logSafe(n.message)}`
  );
}

function typeStatus(n: PollNackReport): ProxyTypeStatus {
  return {
    typeUrl: n.typeUrl,
    wildcard: n.wildcard,
    subscribed: [...n.subscribed],
    // A poll has no nonce and no set version: what it kept is counted in the log line.
    nack: { versionInfo: "", nonce: "", message: n.message },
  };
}
