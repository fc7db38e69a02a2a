/**
 * The relay's outbound queue, pure: watch events (as NDJSON lines) and resyncs (whole lists) in the
 * order they happened, cut into deliveries. One delivery is in flight at a time, and it stays at the
 * head until it is acknowledged or dropped, so a retry sends the same batch before anything newer.
 */

/**
 * One POST: a run of watch events (to /v1/events) or one complete list (to /v1/resync). A resync
 * as posted also carries `watching`, the kinds the relay watches in this cluster at that moment
 * (the sender adds it to each attempt; the queue never holds it, so a retry sends the set of then).
 */
export type Delivery =
  | { type: "events"; lines: readonly string[]; kinds: readonly string[] }
  | { type: "resync"; kind: string; body: string; items: number; watching?: readonly string[] };

/** What the sender should do now. */
export type QueueDecision = { kind: "send" } | { kind: "wait"; ms: number } | { kind: "idle" };

/** Batch size and delay. */
export interface QueueOptions {
  /** A run of this many events is sent at once. */
  batchSize: number;
  /** A shorter run is sent this long after its first event was queued (ms). */
  batchDelayMs: number;
}

type Entry =
  | { type: "event"; kind: string; line: string; at: number }
  | { type: "resync"; kind: string; body: string; items: number; at: number };

/** The queue; see the module comment. */
export interface DeliveryQueue {
  /** Appends one event line of `kind`. */
  pushEvent(kind: string, line: string, now: number): void;
  /**
   * Appends a complete list of `kind`. Queued entries of that kind not yet in flight are dropped:
   * the list is a later, complete picture of the kind, so they add nothing. Returns how many went.
   */
  pushResync(kind: string, body: string, items: number, now: number): number;
  /** Send, wait for the batch delay, or nothing to do. `flushAll` sends short runs at once. */
  decide(now: number, flushAll: boolean): QueueDecision;
  /** The delivery in flight, cutting a new one from the head if none is. Undefined when empty. */
  take(): Delivery | undefined;
  /** Removes the delivery in flight (delivered, or rejected as a whole). */
  ack(): void;
  /** Removes one event (by its index in the in-flight batch) that ingest rejected; the rest stay in flight. */
  dropEvent(index: number): string | undefined;
  /** Events queued, in flight included (resyncs are not counted: at most one per kind is queued). */
  readonly events: number;
  /** Entries queued, in flight included. */
  readonly length: number;
  readonly inFlight: boolean;
}

/** Builds an empty queue. */
export function createDeliveryQueue(options: QueueOptions): DeliveryQueue {
  let entries: Entry[] = [];
  let head = 0;
  /** Entries from `head` that form the delivery in flight (0: none). */
  let flight = 0;
  let events = 0;

  const compact = () => {
    if (head > 1024 && head * 2 > entries.length) {
      entries = entries.slice(head);
      head = 0;
    }
  };

  /** Length of the run of events at the head, up to batchSize, and whether it can still grow. */
  const headRun = (): { n: number; closed: boolean } => {
    let n = 0;
    for (let i = head; i < entries.length && n < options.batchSize; i++, n++) {
      if (entries[i]?.type !== "event") return { n, closed: true };
    }
    return { n, closed: n >= options.batchSize };
  };

  return {
    pushEvent(kind, line, now) {
      entries.push({ type: "event", kind, line, at: now });
      events++;
    },
    pushResync(kind, body, items, now) {
      const keep = entries.slice(head + flight).filter((e) => e.kind !== kind);
      const dropped = entries.length - head - flight - keep.length;
      for (let i = head + flight; i < entries.length; i++) {
        const e = entries[i];
        if (e?.type === "event" && e.kind === kind) events--;
      }
      entries = [...entries.slice(head, head + flight), ...keep];
      head = 0;
      entries.push({ type: "resync", kind, body, items, at: now });
      return dropped;
    },
    decide(now, flushAll) {
      if (head >= entries.length) return { kind: "idle" };
      if (flight > 0) return { kind: "send" };
      const first = entries[head] as Entry;
      if (first.type === "resync") return { kind: "send" };
      const run = headRun();
      if (run.closed || flushAll) return { kind: "send" };
      const due = first.at + options.batchDelayMs;
      return due <= now ? { kind: "send" } : { kind: "wait", ms: due - now };
    },
    take() {
      if (head >= entries.length) return undefined;
      if (flight === 0) {
        const first = entries[head] as Entry;
        flight = first.type === "resync" ? 1 : headRun().n;
      }
      const batch = entries.slice(head, head + flight);
      const first = batch[0] as Entry;
      if (first.type === "resync")
        return { type: "resync", kind: first.kind, body: first.body, items: first.items };
      const evs = batch as Extract<Entry, { type: "event" }>[];
      return { type: "events", lines: evs.map((e) => e.line), kinds: evs.map((e) => e.kind) };
    },
    ack() {
      for (let i = head; i < head + flight; i++) if (entries[i]?.type === "event") events--;
      head += flight;
      flight = 0;
      compact();
    },
    dropEvent(index) {
      if (flight === 0 || index < 0 || index >= flight) return undefined;
      const e = entries[head + index];
      if (e?.type !== "event") return undefined;
      entries.splice(head + index, 1);
      flight--;
      events--;
      return e.line;
    },
    get events() {
      return events;
    },
    get length() {
      return entries.length - head;
    },
    get inFlight() {
      return flight > 0;
    },
  };
}
