/** A manual clock implementing the relay's Timers: time moves only when a test advances it. */
import type { Timers } from "../../../lib/timers.ts";

/** Timers plus `advance`, which runs due callbacks in time order and lets promises settle between them. */
export interface ManualClock extends Timers {
  advance(ms: number): Promise<void>;
  /** Lets pending promise callbacks run without moving time. */
  settle(): Promise<void>;
  pending(): number;
}

/** Starts at t=0. */
export function createManualClock(): ManualClock {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; f: () => void }>();
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return {
    now: () => now,
    setTimeout(f, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), f });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, t]) => t.at <= end)
          .sort((a, b) => a[1].at - b[1].at || a[0] - b[0]);
        const next = due[0];
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].f();
        await settle();
      }
      now = end;
    },
    settle,
    pending: () => timers.size,
  };
}

/**
 * Moves `clock` in steps of `stepMs` until `p` settles, then returns it: for code that waits on the
 * clock (a backoff, a lease renewal) while the test awaits its outcome.
 */
export async function advanceUntilSettled<T>(clock: ManualClock, p: Promise<T>, stepMs = 5): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  p.then(done, done);
  while (!settled) await clock.advance(stepMs);
  return p;
}
