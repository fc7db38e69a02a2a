/**
 * One debounce turn, for any driver (a Node timer, a Durable Object alarm, a schedule):
 * read the queue, decide, flush what is due, and say when to come back.
 */
import { type DebounceOptions, decideDebounce } from "./debounce.ts";
import { type FlushDeps, type FlushResult, flush } from "./flush.ts";
import { readQueue } from "./queue.ts";

export interface DebounceTurn {
  /**
   * The flushes this turn ran (more than one when EDS-only requests skipped the wait), each with
   * when it began and ended (the turn's clock; metrics: debounce time, flush time).
   */
  flushes: (Extract<FlushResult, { kind: "done" }> & { startedAt?: number; endedAt?: number })[];
  /** When to run the next turn (ms since epoch), or null when the queue is empty. */
  nextAt: number | null;
  /**
   * When the oldest request the turn left queued arrived (ms), or null when it left none. The turn
   * flushed everything queued before it began only if this is null or after its start (the same ms
   * counts as before): with PILOT_ENABLE_EDS_DEBOUNCE=false, endpoint-only requests go out while
   * full ones still wait.
   */
  queuedSince: number | null;
  /**
   * Services are left held for pods (lib/push/held-pods.ts): their assignments are not published,
   * so the turn does not count as complete for the sync gate. Set by lib/core/turn.ts.
   */
  podsHeld?: true;
  /**
   * Another flush held the lease (another instance or invocation is publishing): this turn flushed
   * nothing more and left the queue to it. A driver that coalesces across instances (the Lambda
   * debounce) stops here; a timer retries at nextAt.
   */
  busy?: true;
}

/** When the oldest of `queue` arrived, or null for none. */
function oldest(queue: readonly { at: number }[]): number | null {
  let at: number | null = null;
  for (const q of queue) if (at === null || q.at < at) at = q.at;
  return at;
}

/** How long to wait before retrying when another instance holds the flush lease. */
const busyRetryMs = 1000;

/** Runs decisions and flushes until the queue is empty or must wait. One flush at a time. */
export async function runDebounceTurn(deps: FlushDeps, options: DebounceOptions): Promise<DebounceTurn> {
  const flushes: DebounceTurn["flushes"] = [];
  // Each flush derives its push context from the one before it (FlushDeps.lastContext).
  let lastContext = deps.lastContext;
  for (let round = 0; round < 8; round++) {
    const queue = await readQueue(deps.store);
    const now = deps.now();
    const decision = decideDebounce(
      queue.map((q) => ({ key: q.key, at: q.at, full: q.request.full })),
      now,
      options,
    );
    if (decision.kind === "idle") return { flushes, nextAt: null, queuedSince: null };
    if (decision.kind === "wait") return { flushes, nextAt: decision.until, queuedSince: oldest(queue) };
    const startedAt = deps.now();
    const result = await flush(lastContext ? { ...deps, lastContext } : deps, decision.keys);
    if (result.kind === "busy")
      return { flushes, nextAt: now + busyRetryMs, queuedSince: oldest(queue), busy: true };
    flushes.push({ ...result, startedAt, endedAt: deps.now() });
    lastContext = result.context ?? lastContext;
  }
  return { flushes, nextAt: deps.now(), queuedSince: oldest(await readQueue(deps.store)) };
}
