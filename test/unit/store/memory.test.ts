import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareKeys, createMemoryStore } from "../../../lib/store/memory.ts";
import { storeCases } from "./store.cases.ts";

storeCases("memory", createMemoryStore);

describe("compareKeys", () => {
  it("orders by code point, matching UTF-8 byte order", () => {
    const keys = ["b", "\u{1f600}", "\uffff", "a", "\ue000", "\ud7ff", "", "a\u0000", "\u{10000}"];
    const byBytes = (x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y));
    expect([...keys].sort(compareKeys)).toEqual([...keys].sort(byBytes));
    expect([...keys].sort(compareKeys)).toEqual([
      "",
      "a",
      "a\u0000",
      "b",
      "\ud7ff",
      "\ue000",
      "\uffff",
      "\u{10000}",
      "\u{1f600}",
    ]);
  });

  it("agrees with UTF-8 byte order on any strings, with and without surrogates (fast path and slow)", () => {
    const byBytes = (x: string, y: string) => Math.sign(Buffer.compare(Buffer.from(x), Buffer.from(y)));
    const text = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme-ascii" }));
    fc.assert(
      fc.property(text, text, fc.string(), (a, b, prefix) => {
        expect(Math.sign(compareKeys(prefix + a, prefix + b))).toBe(byBytes(prefix + a, prefix + b));
      }),
      { numRuns: 2000 },
    );
  });
});
