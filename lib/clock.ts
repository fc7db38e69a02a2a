/** The clock durations in metrics are measured on. */

/**
 * Seconds on a monotonic high-resolution clock (performance.now, on Node and workerd alike; on
 * workerd it advances only across I/O, as Date.now does there), else the wall clock's.
 */
export const seconds: () => number =
  typeof performance !== "undefined" ? () => performance.now() / 1000 : () => Date.now() / 1000;
