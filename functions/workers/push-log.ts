/** The push log lines of the Workers debounce, in the Node runtime's format (no stream count: no streams here). */
import type { DebounceTurn } from "../../lib/push/run.ts";

/** One line per flush that changed something or recovered a crashed flush; no-op flushes say nothing. */
export function pushLogLines(turn: DebounceTurn, now: number): string[] {
  const lines: string[] = [];
  for (const f of turn.flushes) {
    if (f.changes.length === 0 && !f.recovered) continue;
    const latency = f.request ? now - f.request.start : 0;
    lines.push(
      `push ${f.version}: ${f.request?.full ? "full" : "incremental"}, ${f.changes.length} resource(s) changed, ` +
        `${latency}ms after the first event`,
    );
  }
  return lines;
}
