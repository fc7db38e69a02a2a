/** utf8Length (lib/utf8.ts) agrees with TextEncoder on every kind of string, malformed ones included. */
import { describe, expect, it } from "vitest";
import { utf8Length } from "../../lib/utf8.ts";
import { seededInt } from "../fixtures/seeded.ts";

const encoded = (s: string) => new TextEncoder().encode(s).length;

describe("utf8Length", () => {
  it.each([
    ["empty", ""],
    ["ASCII", "outbound|9080||reviews.default.svc.cluster.local"],
    ["two-byte", "café ñ"],
    ["three-byte", "名前 €"],
    ["a surrogate pair", "a😀b"],
    ["a lone high surrogate at the end", "a\ud83d"],
    ["a lone high surrogate before a letter", "\ud83dx"],
    ["a lone low surrogate", "x\ude00y"],
    ["two high surrogates then a low one", "\ud83d\ud83d\ude00"],
  ])("%s", (_what, s) => {
    expect(utf8Length(s)).toBe(encoded(s));
  });

  it("agrees with TextEncoder on random strings of any code units", () => {
    const next = seededInt(7);
    const units = [0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff];
    for (let round = 0; round < 2000; round++) {
      const s = String.fromCharCode(
        ...Array.from({ length: next(8) }, () => units[next(units.length)] as number),
      );
      expect(utf8Length(s)).toBe(encoded(s));
    }
  });
});
