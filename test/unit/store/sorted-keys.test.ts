import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareKeys, createSortedKeys } from "../../../lib/store/sorted-keys.ts";

/** One operation on the set, replayed on a plain sorted array as the reference. */
type Op = { op: "add" | "delete"; key: string };

// Short keys from a small alphabet collide often; surrogate pairs and U+E000..U+FFFF are where
// UTF-16 order and code-point order disagree, so both are in the alphabet.
const keyArb = fc
  .array(fc.constantFrom("a", "b", "/", "\ue000", "\uffff", "\u{10000}", "\u{1f600}"), { maxLength: 4 })
  .map((parts) => parts.join(""));
const opArb: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom("add", "delete"), key: keyArb });

function replay(ops: readonly Op[]) {
  const set = createSortedKeys();
  const model = new Set<string>();
  for (const { op, key } of ops) {
    if (op === "add") {
      set.add(key);
      model.add(key);
    } else {
      set.delete(key);
      model.delete(key);
    }
  }
  return { set, sorted: [...model].sort(compareKeys) };
}

describe("sorted keys (the memory store's ordered index)", () => {
  it("holds what a sorted array would, in code-point order, and walks from any key", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), keyArb, (ops, start) => {
        const { set, sorted } = replay(ops);
        expect(set.size).toBe(sorted.length);
        expect([...set.fromInclusive("")]).toEqual(sorted);
        expect([...set.fromInclusive(start)]).toEqual(sorted.filter((k) => compareKeys(k, start) >= 0));
        expect([...set.from(start)]).toEqual(sorted.filter((k) => compareKeys(k, start) > 0));
      }),
      { numRuns: 500 },
    );
  });

  it("orders a surrogate key added after plain ones, and plain keys again once it is gone", () => {
    const set = createSortedKeys();
    for (const key of ["a\uffff", "a\ue000", "a"]) set.add(key);
    set.add("a\u{1f600}");
    expect([...set.fromInclusive("")]).toEqual(["a", "a\ue000", "a\uffff", "a\u{1f600}"]);
    expect([...set.from("a\uffff")]).toEqual(["a\u{1f600}"]);
    set.delete("a\u{1f600}");
    set.add("a\ufffe");
    expect([...set.fromInclusive("a\ue001")]).toEqual(["a\ufffe", "a\uffff"]);
  });

  it("stays ordered across many chunks with inserts in random order and deletes in between", () => {
    const set = createSortedKeys();
    const keys = Array.from(
      { length: 5000 },
      (_, i) => `k/${((i * 7919) % 5000).toString().padStart(5, "0")}`,
    );
    for (const key of keys) set.add(key);
    for (const key of keys.slice(0, 1000)) set.delete(key);
    const want = keys.slice(1000).sort();
    expect(set.size).toBe(4000);
    expect([...set.fromInclusive("k/")]).toEqual(want);
    expect([...set.from(want[1999] as string)]).toEqual(want.slice(2000));
    set.add(want[0] as string); // already present: no duplicate
    expect(set.size).toBe(4000);
  });
});
