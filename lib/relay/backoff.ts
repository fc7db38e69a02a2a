/** Exponential backoff with jitter, capped, reset on success. Pure: the random source is passed in. */

export interface BackoffOptions {
  /** The ceiling of the first delay (ms). */
  initialMs: number;
  /** No delay is longer than this (ms). */
  maxMs: number;
  /** Growth per consecutive failure (default 2). */
  factor?: number;
}

/** 100ms ▶ 30s, doubling. */
export const defaultBackoff: BackoffOptions = { initialMs: 100, maxMs: 30_000, factor: 2 };

/**
 * The delay before retry number `attempt` (0 for the first): ceiling = min(max, initial·factor^attempt),
 * jittered uniformly into [ceiling/2, ceiling] so relays that failed together do not retry together,
 * while every delay still grows with the failures behind it.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const growth = (options.factor ?? 2) ** Math.min(Math.max(attempt, 0), 64);
  const ceiling = Math.min(options.maxMs, options.initialMs * growth);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** A failure counter with its next delay; `reset()` after a success. */
export interface Backoff {
  /** The delay before the next retry; counts one more failure. */
  next(): number;
  reset(): void;
  /** Consecutive failures so far. */
  readonly failures: number;
}

/** Builds a Backoff over backoffDelay. */
export function createBackoff(options: BackoffOptions, random: () => number): Backoff {
  let failures = 0;
  return {
    next: () => backoffDelay(failures++, options, random),
    reset: () => {
      failures = 0;
    },
    get failures() {
      return failures;
    },
  };
}
