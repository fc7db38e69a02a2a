/**
 * The relay's sender: queues events and resyncs, batches them, and posts one delivery at a time,
 * retrying the same delivery with backoff until ingest takes it. Time, randomness and the POST are
 * injected, so tests drive it with a manual clock.
 *
 * The queue is bounded: past `maxQueuedEvents` the sender calls `onOverflow` once (the relay stops
 * its watches, so nothing more arrives), keeps delivering what it holds, and calls `onDrained` when
 * empty (the relay then relists every kind). Nothing queued is dropped to make room, and what the
 * stopped watches would have brought comes with the relists.
 */

import { logError, logWarn } from "../log/line-log.ts";
import type { Timers } from "../timers.ts";
import { type BackoffOptions, createBackoff } from "./backoff.ts";
import type { KubeList, WatchEvent } from "./list.ts";
import { classifyPost, type PostResult, restarted } from "./outcome.ts";
import { createDeliveryQueue, type Delivery } from "./queue.ts";

/** What the sender needs. */
export interface DeliveryOptions {
  batchSize: number;
  batchDelayMs: number;
  maxQueuedEvents: number;
  backoff: BackoffOptions;
  post(delivery: Delivery): Promise<PostResult>;
  timers: Timers;
  random: () => number;
  log(line: string): void;
  onOverflow(): void;
  onDrained(): void;
  /**
   * The control plane's state changed lifetime (a new instance id in an answer: it restarted
   * without its store): relist and resync every kind now, not at the next periodic resync.
   */
  onRestart?(): void;
  /**
   * The kinds the relay watches now; asked at each resync POST (retries included) and sent with it,
   * so the control plane knows every kind it must hear from before the cluster counts as synced.
   */
  watching?(): readonly string[];
}

/** Counters for logs and tests. */
export interface DeliveryStats {
  queuedEvents: number;
  queuedEntries: number;
  deliveredEvents: number;
  deliveredResyncs: number;
  rejectedEvents: number;
  rejectedResyncs: number;
  retries: number;
}

/** The sender. */
export interface DeliverySender {
  /** Queues one watch event of `kind` (ADDED, MODIFIED or DELETED). */
  event(kind: string, event: WatchEvent): void;
  /** Queues a complete list of `kind`; it replaces queued entries of that kind not yet in flight. */
  resync(kind: string, list: KubeList): void;
  /** Sends everything without the batch delay; true once empty, false if `timeoutMs` passed first. */
  flush(timeoutMs: number): Promise<boolean>;
  /**
   * When idle, posts an empty batch to learn the control plane's instance id, so a restart is
   * noticed (onRestart) even when the cluster is quiet. Does nothing while anything is queued or
   * in flight: those answers carry the id anyway.
   */
  heartbeat(): void;
  /** Stops sending; an answer still in flight is ignored. */
  stop(): void;
  stats(): DeliveryStats;
}

/** Builds the sender. */
export function createDeliverySender(o: DeliveryOptions): DeliverySender {
  const queue = createDeliveryQueue({ batchSize: o.batchSize, batchDelayMs: o.batchDelayMs });
  const backoff = createBackoff(o.backoff, o.random);
  const { timers } = o;
  let timer: { handle: unknown; kind: "batch" | "retry" } | undefined;
  let sending = false;
  let stopped = false;
  let flushing = false;
  let overflowed = false;
  let idleWaiters: (() => void)[] = [];
  let instance: string | undefined;
  const stats = {
    deliveredEvents: 0,
    deliveredResyncs: 0,
    rejectedEvents: 0,
    rejectedResyncs: 0,
    retries: 0,
  };

  const setTimer = (kind: "batch" | "retry", ms: number) => {
    timer = {
      kind,
      handle: timers.setTimeout(() => {
        timer = undefined;
        kick();
      }, ms),
    };
  };
  const clearBatchTimer = () => {
    if (timer?.kind !== "batch") return;
    timers.clearTimeout(timer.handle);
    timer = undefined;
  };

  function kick(): void {
    if (stopped || sending || timer) return;
    const d = queue.decide(timers.now(), flushing);
    if (d.kind === "wait") {
      setTimer("batch", d.ms);
      return;
    }
    if (d.kind === "send") {
      void send();
      return;
    }
    if (overflowed) {
      overflowed = false;
      o.log("relay: queue drained after an overflow: relisting every kind");
      o.onDrained();
    }
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  }

  async function send(): Promise<void> {
    const delivery = queue.take();
    if (delivery === undefined) return;
    sending = true;
    const posted =
      delivery.type === "resync" && o.watching ? { ...delivery, watching: o.watching() } : delivery;
    let result: PostResult;
    try {
      result = await o.post(posted);
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err) };
    }
    sending = false;
    if (stopped) return;
    settle(delivery, result);
    kick();
  }

  /** Remembers the answer's instance id; a different one than before means a restart. */
  function observe(result: PostResult): void {
    if (restarted(instance, result) && "instance" in result) {
      o.log(
        `relay: the control plane's state is new (instance ${result.instance}, was ${instance}): ` +
          "it restarted without its store; relisting and resyncing every kind",
      );
      o.onRestart?.();
    }
    if (!("error" in result) && result.instance) instance = result.instance;
  }

  async function beat(): Promise<void> {
    sending = true;
    let result: PostResult;
    try {
      result = await o.post({ type: "events", lines: [], kinds: [] });
    } catch (err) {
      result = { error: err instanceof Error ? err.message : String(err) };
    }
    sending = false;
    if (stopped) return;
    observe(result);
    kick();
  }

  function settle(delivery: Delivery, result: PostResult): void {
    const what = describe(delivery);
    observe(result);
    const outcome = classifyPost(result);
    switch (outcome.kind) {
      case "delivered":
        if (delivery.type === "events") stats.deliveredEvents += delivery.lines.length;
        else stats.deliveredResyncs++;
        if (backoff.failures > 0) o.log(`relay: ${what} delivered after ${backoff.failures} failure(s)`);
        backoff.reset();
        queue.ack();
        return;
      case "retry":
      case "unauthorized": {
        stats.retries++;
        const ms = backoff.next();
        const hint =
          outcome.kind === "unauthorized" ? " (check EDGEPILOT_TOKEN against the control plane's)" : "";
        logWarn(o.log, `relay: ${what} failed: ${outcome.why}${hint}; retrying the same batch in ${ms}ms`);
        setTimer("retry", ms);
        return;
      }
      case "rejected": {
        backoff.reset();
        const line =
          delivery.type === "events" && outcome.index !== undefined && queue.dropEvent(outcome.index);
        if (line) {
          stats.rejectedEvents++;
          logError(
            o.log,
            `relay: ERROR: ingest rejected event ${outcome.index} of ${what}: ${outcome.why}; ` +
              `dropping that event and resending the other ${delivery.type === "events" ? delivery.lines.length - 1 : 0}. ` +
              `This is a relay or API server bug; the event was: ${line.slice(0, 2000)}`,
          );
          return;
        }
        if (delivery.type === "events") stats.rejectedEvents += delivery.lines.length;
        else stats.rejectedResyncs++;
        logError(
          o.log,
          `relay: ERROR: ingest rejected ${what}: ${outcome.why}; skipping it (a relay bug: please report)`,
        );
        queue.ack();
        return;
      }
    }
  }

  return {
    event(kind, event) {
      if (stopped) return;
      queue.pushEvent(kind, JSON.stringify({ type: event.type, object: event.object }), timers.now());
      if (!overflowed && queue.events > o.maxQueuedEvents) {
        overflowed = true;
        logWarn(
          o.log,
          `relay: queue holds ${queue.events} events (limit ${o.maxQueuedEvents}): ingest is not keeping up. ` +
            "Stopping every watch; the queue keeps draining, then every kind is relisted and resynced.",
        );
        o.onOverflow();
      }
      if (queue.decide(timers.now(), flushing).kind === "send") clearBatchTimer();
      kick();
    },
    resync(kind, list) {
      if (stopped) return;
      const body = JSON.stringify(list);
      const superseded = queue.pushResync(kind, body, list.items.length, timers.now());
      if (superseded > 0)
        o.log(`relay: ${kind}: a new list replaced ${superseded} queued entries of that kind`);
      clearBatchTimer();
      kick();
    },
    flush(timeoutMs) {
      flushing = true;
      clearBatchTimer();
      return new Promise<boolean>((resolve) => {
        const deadline = timers.setTimeout(() => resolve(false), timeoutMs);
        idleWaiters.push(() => {
          timers.clearTimeout(deadline);
          resolve(true);
        });
        kick();
      });
    },
    heartbeat() {
      if (stopped || sending || timer || queue.length > 0) return;
      void beat();
    },
    stop() {
      stopped = true;
      if (timer) timers.clearTimeout(timer.handle);
      timer = undefined;
    },
    stats: () => ({ ...stats, queuedEvents: queue.events, queuedEntries: queue.length }),
  };
}

function describe(d: Delivery): string {
  return d.type === "events"
    ? `POST /v1/events (${d.lines.length} event(s))`
    : `POST /v1/resync kind=${d.kind} (${d.items} item(s))`;
}
