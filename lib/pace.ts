/**
 * Cooperative time slicing for long loops on a shared event loop (Node and Workers alike): a
 * loop awaits its pace once per item, which costs a resolved promise until `sliceMs` have passed
 * and then yields to the event loop once, so timers, sockets, /ready and xDS streams run between
 * slices. No ingest request may hold the loop much longer than one slice plus one item.
 */

/** Awaited once per item of a long loop; yields to the event loop when the slice is used up. */
export type Pace = () => Promise<void>;

export interface PaceOptions {
  /** Longest run between yields (ms); default 10. */
  sliceMs?: number;
  /** Monotonic clock (ms); default performance.now. Injected by tests. */
  now?: () => number;
  /** How to yield; default `yieldToEventLoop`. Injected by tests. */
  yieldNow?: () => Promise<void>;
}

/** Default slice: well under the ~50 ms a request may hold the loop, large enough to stay cheap. */
export const defaultSliceMs = 10;

/** A pace for one request: its slice starts when it is created. */
export function createPace(options: PaceOptions = {}): Pace {
  const sliceMs = options.sliceMs ?? defaultSliceMs;
  const now = options.now ?? (() => performance.now());
  const yieldNow = options.yieldNow ?? yieldToEventLoop;
  let since = now();
  // Not async: the common call (slice not used up) hands back one settled promise, allocating nothing.
  return () => {
    if (now() - since < sliceMs) return settled;
    return yieldNow().then(() => {
      since = now();
    });
  };
}

const settled: Promise<void> = Promise.resolve();

/** A pace that never yields: for tests and small, bounded work. */
export const noPace: Pace = async () => {};

/**
 * Yields one macrotask turn: `scheduler.yield()` where the runtime has it, else `setImmediate`
 * (Node: runs right after the loop's I/O phase, without setTimeout's 1 ms floor, which cost a tenth
 * of a paced ingest's wall time), else `setTimeout(0)`. A microtask would not let I/O run.
 */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as {
    scheduler?: { yield?: () => Promise<void> };
    setImmediate?: (f: () => void) => unknown;
  };
  if (typeof g.scheduler?.yield === "function") return g.scheduler.yield();
  const immediate = g.setImmediate;
  if (typeof immediate === "function") return new Promise((resolve) => void immediate(resolve));
  return new Promise((resolve) => setTimeout(resolve, 0));
}
