/** The push log's lines, one format for every host (tests and operators grep them). */
import { logAt } from "../log/line-log.ts";
import type { Flush, MeshObserver } from "./hooks.ts";

/** True for a flush that changed nothing, recovered nothing and is no refresh (push-refresh.ts): a no-op says nothing. */
export function isQuietFlush(flush: Flush): boolean {
  return flush.changes.length === 0 && !flush.recovered && !flush.refresh;
}

/**
 * The line of one flush, or undefined for a quiet flush (isQuietFlush). `latencyMs` is the time
 * since its first event; `streams` is how many streams the push reaches, when the host names it.
 */
export function pushLogLine(flush: Flush, latencyMs: number, streams?: number): string | undefined {
  if (isQuietFlush(flush)) return undefined;
  const { resources, sidecars } = changeCounts(flush);
  return (
    `push ${flush.version}: ${flush.request?.full ? "full" : "incremental"}, ${resources} resource(s) changed` +
    `${sidecars ? " (Envoy sidecars rebuild theirs)" : ""}, ` +
    `${latencyMs}ms after the first event${streams === undefined ? "" : `, ${streams} stream(s)`}`
  );
}

/** The published resources a flush changed, and whether it is a refresh (sidecar resources may have changed beyond them). */
function changeCounts(flush: Flush): { resources: number; sidecars: boolean } {
  return { resources: flush.changes.length, sidecars: flush.refresh === true };
}

/**
 * Why a flush pushed, as Istio's trigger reasons with their counts (`config:1,endpoint:3`), or
 * `recovered` for a flush that took over a crashed one without its request.
 */
export function pushReason(flush: Flush): string {
  const reasons = Object.entries(flush.request?.reasons ?? {}).map(([r, n]) => `${r}:${n}`);
  if (flush.recovered) reasons.push("recovered");
  return reasons.join(",") || "unknown";
}

/**
 * The observer that writes one push log line per push (the core's onPush), at info in scope
 * `push`, with its fields: version, type, reason, resources, duration_ms (first event to the push
 * announced) and, when `streams` is set, the streams it reached.
 */
export function createPushLogObserver(
  log: (line: string) => void,
  options: { streams?: boolean } = {},
): MeshObserver {
  return {
    onPush({ flush, latencyMs, streams }) {
      const shown = options.streams ? streams : undefined;
      const line = pushLogLine(flush, latencyMs, shown);
      if (line === undefined) return;
      logAt(log, "info", line, {
        version: flush.version,
        type: flush.request?.full ? "full" : "incremental",
        reason: pushReason(flush),
        resources: changeCounts(flush).resources,
        duration_ms: latencyMs,
        ...(shown !== undefined && { streams: shown }),
      });
    },
  };
}

/** Retry delay after a failed debounce turn (ms), for every driver. */
export const turnRetryMs = 1000;

/** The line a driver logs when a turn failed and it retries after turnRetryMs. */
export function turnFailedLine(err: unknown): string {
  return `debounce: turn failed, retrying: ${err instanceof Error ? (err.stack ?? err.message) : err}`;
}
