/** The push log's lines, one format for every host (tests and operators grep them). */
import type { Flush } from "./hooks.ts";

/**
 * The line of one flush, or undefined for a flush that changed nothing and recovered nothing (a
 * no-op says nothing). `streams` is how many streams the push reaches, when the host names it.
 */
export function pushLogLine(flush: Flush, now: number, streams?: number): string | undefined {
  if (flush.changes.length === 0 && !flush.recovered) return undefined;
  const latency = flush.request ? now - flush.request.start : 0;
  return (
    `push ${flush.version}: ${flush.request?.full ? "full" : "incremental"}, ${flush.changes.length} resource(s) changed, ` +
    `${latency}ms after the first event${streams === undefined ? "" : `, ${streams} stream(s)`}`
  );
}

/** Retry delay after a failed debounce turn (ms), for every driver. */
export const turnRetryMs = 1000;

/** The line a driver logs when a turn failed and it retries after turnRetryMs. */
export function turnFailedLine(err: unknown): string {
  return `debounce: turn failed, retrying: ${err instanceof Error ? (err.stack ?? err.message) : err}`;
}
