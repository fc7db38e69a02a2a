/**
 * The debounce decision, pure: (queue, now, options) ─▶ push these, wait until then, or idle.
 * Istio's semantics (pilot/pkg/xds/discovery.go debounce): push once the queue has been quiet
 * for debounceAfter, or once its first event is debounceMax old; with EDS debounce off,
 * endpoint-only requests do not wait at all.
 */

export interface DebounceOptions {
  /** PILOT_DEBOUNCE_AFTER: quiet time before a push (ms). */
  debounceAfter: number;
  /** PILOT_DEBOUNCE_MAX: the longest an event waits (ms). */
  debounceMax: number;
  /** PILOT_ENABLE_EDS_DEBOUNCE: when false, incremental (EDS-only) requests skip the wait. */
  enableEdsDebounce: boolean;
}

export const defaultDebounceOptions: DebounceOptions = {
  debounceAfter: 100,
  debounceMax: 10_000,
  enableEdsDebounce: true,
};

/** What the decision needs of each queued request. */
export interface DebounceItem {
  key: string;
  /** Arrival time, ms since epoch. */
  at: number;
  full: boolean;
}

export type DebounceDecision =
  | { kind: "idle" }
  | { kind: "push"; keys: string[] }
  | { kind: "wait"; until: number };

/** Decides what to do now. Never returns "wait" with a time at or before `now`. */
export function decideDebounce(
  items: readonly DebounceItem[],
  now: number,
  options: DebounceOptions,
): DebounceDecision {
  if (items.length === 0) return { kind: "idle" };
  if (!options.enableEdsDebounce) {
    const eds = items.filter((i) => !i.full);
    if (eds.length > 0) return { kind: "push", keys: eds.map((i) => i.key) };
  }
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const i of items) {
    first = Math.min(first, i.at);
    last = Math.max(last, i.at);
  }
  const eventDelay = now - first;
  const quietTime = now - last;
  if (eventDelay >= options.debounceMax || quietTime >= options.debounceAfter) {
    return { kind: "push", keys: items.map((i) => i.key) };
  }
  return { kind: "wait", until: Math.min(first + options.debounceMax, last + options.debounceAfter) };
}

/**
 * Parses a duration as Istio's env vars take it: Go-style ("100ms", "10s", "1m30s", "1.5s")
 * or a bare number of milliseconds. Returns an error message instead of throwing.
 */
export function parseDuration(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  const s = text.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return { ok: true, ms: Number(s) };
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let ms = 0;
  let matched = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    ms += Number(m[1]) * (unit[m[2] as string] as number);
    matched = re.lastIndex;
  }
  if (s.length === 0 || matched !== s.length) {
    return {
      ok: false,
      error: `not a duration: ${JSON.stringify(text)} (want e.g. "100ms", "10s" or milliseconds)`,
    };
  }
  return { ok: true, ms };
}
