/**
 * Rules on well-known types (bufbuild/protoc-gen-validate templates/goshared/duration.go,
 * timestamp.go, any.go, wrapper.go): Duration and Timestamp compare as exact nanoseconds with the
 * numeric range semantics (numbers.ts); a malformed Duration or Timestamp is itself a violation;
 * lt_now/gt_now/within compare to an injected clock; Any's in/not_in test its type URL. Wrappers
 * (google.protobuf.*Value) carry the scalar rules of their value; unset, they are not checked.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import type { AnyRules, DurationRules, TimestampRules } from "../../../lib/gen/validate/validate_pb.ts";
import { type Bounds, checkBounds } from "./numbers.ts";
import { own, type PathLike, raw, type Sink, show } from "./shared.ts";

type Seconds = { seconds: bigint; nanos: number };
const NS = 1_000_000_000n;
const nanos = (d: Seconds) => d.seconds * NS + BigInt(d.nanos);

/** Nanoseconds as a Go-style duration string (1.5s, -2s, 0s). */
export function fmtNanos(n: bigint): string {
  const neg = n < 0n;
  const a = neg ? -n : n;
  const frac = (a % NS).toString().padStart(9, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${a / NS}${frac ? `.${frac}` : ""}s`;
}

function durationBounds(r: DurationRules | TimestampRules): Bounds<bigint> {
  const n = (d: Seconds | undefined) => (d ? nanos(d) : undefined);
  return {
    const: n(r.const),
    lt: n(r.lt),
    lte: n(r.lte),
    gt: n(r.gt),
    gte: n(r.gte),
    in: "in" in r ? r.in.map(nanos) : undefined,
    notIn: "notIn" in r ? r.notIn.map(nanos) : undefined,
  };
}

/** A Duration in range (±10,000 years, nanos agreeing in sign) and every DurationRules check. */
export function checkDuration(d: Seconds, r: DurationRules, path: PathLike, sink: Sink) {
  const valid =
    d.seconds >= -315_576_000_000n &&
    d.seconds <= 315_576_000_000n &&
    Math.abs(d.nanos) < 1e9 &&
    !(d.seconds > 0n && d.nanos < 0) &&
    !(d.seconds < 0n && d.nanos > 0);
  if (!valid) return sink(path, "duration.valid", raw(`${d.seconds}s ${d.nanos}ns`));
  checkBounds("duration", nanos(d), durationBounds(r), path, sink, fmtNanos);
}

/** A Timestamp in range (years 1-9999) and every TimestampRules check, `now` in nanoseconds since the epoch. */
export function checkTimestamp(t: Seconds, r: TimestampRules, nowNanos: bigint, path: PathLike, sink: Sink) {
  const valid =
    t.seconds >= -62_135_596_800n && t.seconds <= 253_402_300_799n && t.nanos >= 0 && t.nanos < 1e9;
  if (!valid) return sink(path, "timestamp.valid", raw(`${t.seconds}s ${t.nanos}ns`));
  const v = nanos(t);
  const fmt = (n: bigint) => new Date(Number(n / 1_000_000n)).toISOString();
  checkBounds("timestamp", v, durationBounds(r), path, sink, fmt);
  const within = r.within ? nanos(r.within) : undefined;
  const ltNow = own(r, "ltNow");
  const gtNow = own(r, "gtNow");
  // timestamp.go: lt_now/gt_now alone compare to now; with within, the value must also be no
  // further than `within` from now on that side; within alone bounds |value - now|.
  if (ltNow) {
    if (!(v < nowNanos) || (within !== undefined && v < nowNanos - within))
      sink(path, `timestamp.lt_now${within === undefined ? "" : ` within ${fmtNanos(within)}`}`, raw(fmt(v)));
  } else if (gtNow) {
    if (!(v > nowNanos) || (within !== undefined && v > nowNanos + within))
      sink(path, `timestamp.gt_now${within === undefined ? "" : ` within ${fmtNanos(within)}`}`, raw(fmt(v)));
  } else if (within !== undefined) {
    const gap = v > nowNanos ? v - nowNanos : nowNanos - v;
    if (gap > within) sink(path, `timestamp.within ${fmtNanos(within)}`, raw(fmt(v)));
  }
}

/** Any's in / not_in over its type URL. */
export function checkAnyRules(typeUrl: string, r: AnyRules, path: PathLike, sink: Sink) {
  if (r.in.length > 0 && !r.in.includes(typeUrl)) sink(path, `any.in ${show(r.in)}`, typeUrl);
  if (r.notIn.includes(typeUrl)) sink(path, `any.not_in ${show(r.notIn)}`, typeUrl);
}

/** google.protobuf.*Value: a message of one field named `value`. */
export function isWrapper(d: DescMessage): boolean {
  return d.typeName.startsWith("google.protobuf.") && d.typeName.endsWith("Value") && d.fields.length === 1;
}

/** Whether `d` is google.protobuf.Duration / Timestamp / Any. */
export const isWkt = (d: DescMessage, name: "Duration" | "Timestamp" | "Any") =>
  d.typeName === `google.protobuf.${name}`;
