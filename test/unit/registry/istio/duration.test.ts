import { describe, expect, it } from "vitest";
import { duration, durationMs, parseGoDuration } from "../../../../lib/registry/istio/duration.ts";

describe("parseGoDuration (time.ParseDuration)", () => {
  it.each([
    ["1.5s", 1_500_000_000n],
    ["100ms", 100_000_000n],
    ["1h30m", 5_400_000_000_000n],
    ["0", 0n],
    [".5s", 500_000_000n],
    ["5.s", 5_000_000_000n],
    ["-2us", -2_000n],
    ["1µs", 1_000n],
    ["1.0000000001s", 1_000_000_000n],
  ])("%s = %s ns", (s, nanos) => expect(parseGoDuration(s)).toEqual({ ok: true, nanos }));

  it.each([
    ["", "not a duration"],
    ["1", "missing unit"],
    ["1d", "unknown unit"],
    [".s", "expected a number"],
    ["3000000h", "out of range"],
  ])("refuses %j", (s, why) => {
    const r = parseGoDuration(s);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(why);
  });
});

describe("duration (ValidateDuration)", () => {
  it.each([["1ms"], ["1.5s"], ["2h"], ["0.001s"]])("accepts %s", (s) =>
    expect(duration(s, "t")).toBeUndefined());
  it.each([
    ["0s", "duration must be greater than 1ms"],
    ["500us", "duration must be greater than 1ms"],
    ["-1s", "duration must be greater than 1ms"],
    ["1.0005s", "ms precision"],
    ["10", "missing unit"],
    [10, "must be a duration string"],
  ])("refuses %j", (v, why) =>
    expect(duration(v, "t")).toEqual({ field: "t", message: expect.stringContaining(why) }));
  it("converts to milliseconds", () => expect(durationMs("1m0.25s")).toBe(60_250));
});
