/**
 * Durations as istiod reads them from a CRD: the JSON string is parsed with Go's time.ParseDuration
 * (golang/protobuf jsonpb), so `1.5s`, `100ms`, `1h30m` and `0` are all valid, and validated with
 * ValidateDuration: at least 1ms and a whole number of milliseconds. Pure; exact (BigInt nanoseconds).
 */
import { type Check, quote, typeName } from "../check.ts";

const unitNanos: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // micro sign
  "\u03bcs": 1_000n, // Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const maxNanos = (1n << 63n) - 1n;
const nanosPerMs = 1_000_000n;

/**
 * Parses a Go duration string to nanoseconds, or gives the reason it is not one. Follows
 * time.ParseDuration: optional sign, then one or more `<decimal><unit>` pairs (`.5s` and `5.s` are
 * valid), units ns, us, µs, ms, s, m, h; `0` alone is zero; the total must fit an int64.
 */
export function parseGoDuration(s: string): { ok: true; nanos: bigint } | { ok: false; reason: string } {
  let rest = s;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest[0] === "-";
    rest = rest.slice(1);
  }
  if (rest === "0") return { ok: true, nanos: 0n };
  if (rest === "") return { ok: false, reason: "is not a duration" };
  let total = 0n;
  while (rest !== "") {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest) as RegExpExecArray;
    const whole = m[1] ?? "";
    const frac = m[2] ?? "";
    if (whole === "" && frac === "") return { ok: false, reason: "is not a duration: expected a number" };
    rest = rest.slice(m[0].length);
    const unit = /^[^0-9.]+/.exec(rest)?.[0] ?? "";
    const scale = unitNanos[unit];
    if (unit === "") return { ok: false, reason: "is not a duration: missing unit (ns, us, ms, s, m or h)" };
    if (scale === undefined) return { ok: false, reason: `is not a duration: unknown unit ${quote(unit)}` };
    rest = rest.slice(unit.length);
    // Go keeps the integer part exact and drops fraction digits past nanosecond precision.
    let v = BigInt(whole === "" ? "0" : whole) * scale;
    if (frac !== "") v += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    total += v;
    if (total > maxNanos) return { ok: false, reason: "is not a duration: out of range" };
  }
  return { ok: true, nanos: negative ? -total : total };
}

/**
 * A duration field as istiod validates it: a Go duration string of at least 1ms, whole
 * milliseconds only (ValidateDuration). The value the generators use is `durationMs`.
 */
export const duration: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a duration string, got ${typeName(v)}` };
  const r = parseGoDuration(v);
  if (!r.ok) return { field: path, message: `${quote(v)} ${r.reason}` };
  if (r.nanos < nanosPerMs) return { field: path, message: "duration must be greater than 1ms" };
  if (r.nanos % nanosPerMs !== 0n)
    return { field: path, message: "only durations to ms precision are supported" };
  return undefined;
};

/**
 * A duration field only the CRD schema bounds (`duration(self) >= duration('1ms')`), istiod
 * checking nothing more: any precision at or above 1ms.
 */
export const crdDuration: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a duration string, got ${typeName(v)}` };
  const r = parseGoDuration(v);
  if (!r.ok) return { field: path, message: `${quote(v)} ${r.reason}` };
  return r.nanos < nanosPerMs
    ? { field: path, message: "must be a valid duration greater than 1ms" }
    : undefined;
};

/** A duration field neither istiod nor the CRD bounds: any Go duration (jsonpb must read it). */
export const anyDuration: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a duration string, got ${typeName(v)}` };
  const r = parseGoDuration(v);
  return r.ok ? undefined : { field: path, message: `${quote(v)} ${r.reason}` };
};

/** Nanoseconds of a Go duration string, or undefined when it is not one. */
export function durationNanos(v: string): bigint | undefined {
  const r = parseGoDuration(v);
  return r.ok ? r.nanos : undefined;
}

/** Milliseconds of a duration the `duration` check accepted (whole by construction). */
export function durationMs(v: string): number {
  const r = parseGoDuration(v);
  if (!r.ok) throw new Error(`not a validated duration: ${quote(v)}`);
  return Number(r.nanos / nanosPerMs);
}
