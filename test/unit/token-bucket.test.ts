import { describe, expect, it } from "vitest";
import { createTokenBucket, type TokenBucketOptions } from "../../lib/token-bucket.ts";

const bucket = (o: Partial<TokenBucketOptions> = {}) =>
  createTokenBucket({ ratePerSecond: 25, burst: 1, maxWaitMs: 1000, ...o });

/** `at`: the times (ms) callers arrive; `want`: each one's decision ("wait N" or "refused"). */
const cases: { name: string; options?: Partial<TokenBucketOptions>; at: number[]; want: string[] }[] = [
  { name: "the first caller passes at once", at: [0], want: ["wait 0"] },
  {
    name: "callers spaced by 1/rate pass at once",
    at: [0, 40, 80, 120],
    want: ["wait 0", "wait 0", "wait 0", "wait 0"],
  },
  {
    name: "callers at the same instant queue 1/rate apart (istiod's burst 1)",
    at: [0, 0, 0, 0],
    want: ["wait 0", "wait 40", "wait 80", "wait 120"],
  },
  {
    name: "beyond the longest wait a caller is refused and reserves nothing",
    options: { ratePerSecond: 2, maxWaitMs: 1000 },
    at: [0, 0, 0, 0, 0],
    want: ["wait 0", "wait 500", "wait 1000", "refused", "refused"],
  },
  {
    name: "a refused caller does not delay the next one",
    options: { ratePerSecond: 1, maxWaitMs: 0 },
    at: [0, 0, 0, 1000],
    want: ["wait 0", "refused", "refused", "wait 0"],
  },
  {
    name: "a burst of 3 lets three through at once after a quiet spell, then one per 1/rate",
    options: { ratePerSecond: 10, burst: 3, maxWaitMs: 0 },
    at: [0, 0, 0, 0, 100, 5000, 5000, 5000, 5000],
    want: ["wait 0", "wait 0", "wait 0", "refused", "wait 0", "wait 0", "wait 0", "wait 0", "refused"],
  },
  {
    name: "a clock that steps back does not mint tokens",
    options: { ratePerSecond: 1, maxWaitMs: 0 },
    at: [1000, 0, 1000],
    want: ["wait 0", "refused", "refused"],
  },
  {
    name: "fractional rates: 0.5/s is one every 2s",
    options: { ratePerSecond: 0.5, maxWaitMs: 0 },
    at: [0, 1999, 2000],
    want: ["wait 0", "refused", "wait 0"],
  },
];

describe("token bucket (PILOT_MAX_REQUESTS_PER_SECOND)", () => {
  it.each(cases)("$name", ({ options, at, want }) => {
    const b = bucket(options);
    const got = at.map((t) => {
      const d = b.take(t);
      return d.ok ? `wait ${d.waitMs}` : "refused";
    });
    expect(got).toEqual(want);
  });

  it("says how much longer a refused caller would have had to wait", () => {
    const b = bucket({ ratePerSecond: 1, maxWaitMs: 500 });
    b.take(0);
    expect(b.take(0)).toEqual({ ok: false, retryAfterMs: 500 });
  });

  it.each([
    { ratePerSecond: 0 },
    { ratePerSecond: Number.NaN },
    { burst: 0 },
    { maxWaitMs: -1 },
  ])("refuses nonsense options %o", (o) => {
    expect(() => bucket(o)).toThrow(RangeError);
  });
});
