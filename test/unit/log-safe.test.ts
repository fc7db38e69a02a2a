import { describe, expect, it } from "vitest";
import { logSafe } from "../../lib/log-safe.ts";

describe("logSafe", () => {
  it.each([
    ["plain", '"plain"'],
    ["two\nlines", '"two\\nlines"'],
    ['a "quote" and \\', '"a \\"quote\\" and \\\\"'],
    ["\u001b[31mred", '"\\u001b[31mred"'],
    ["sep\u2028x\u2029", '"sep\\u2028x\\u2029"'],
    ["\ud800lone", '"\\ud800lone"'],
  ])("escapes %j as one line", (input, want) => {
    expect(logSafe(input)).toBe(want);
    expect(logSafe(input)).not.toMatch(/[\n\r\u2028\u2029]/);
  });

  it("truncates long input and says how much was elided", () => {
    const out = logSafe("x".repeat(1000), 10);
    expect(out).toBe(`"${"x".repeat(10)}…(+990 chars)"`);
  });

  it("stringifies non-strings", () => {
    expect(logSafe(new Error("bad\nthing"))).toBe('"Error: bad\\nthing"');
  });
});
