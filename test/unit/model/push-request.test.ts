import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeAll, mergePushRequests, type PushRequest, pushRequest } from "../../../lib/model/index.ts";

const req = (o: Partial<PushRequest> = {}): PushRequest => ({
  full: false,
  configsUpdated: [],
  reasons: { endpoint: 1 },
  start: 1000,
  ...o,
});

describe("mergePushRequests", () => {
  const cases: { name: string; a: PushRequest; b: PushRequest; want: PushRequest }[] = [
    {
      name: "full wins",
      a: req({ full: true }),
      b: req(),
      want: req({ full: true, reasons: { endpoint: 2 } }),
    },
    {
      name: "configs are a sorted union",
      a: req({ configsUpdated: ["ServiceEntry/ns/b", "ServiceEntry/ns/a"] }),
      b: req({ configsUpdated: ["ServiceEntry/ns/c", "ServiceEntry/ns/b"] }),
      want: req({
        configsUpdated: ["ServiceEntry/ns/a", "ServiceEntry/ns/b", "ServiceEntry/ns/c"],
        reasons: { endpoint: 2 },
      }),
    },
    {
      name: "unknown scope absorbs",
      a: req({ full: true, configsUpdated: null, reasons: { global: 1 } }),
      b: req({ configsUpdated: ["ServiceEntry/ns/a"] }),
      want: req({ full: true, configsUpdated: null, reasons: { endpoint: 1, global: 1 } }),
    },
    {
      name: "reasons are counted, start is the earliest",
      a: req({ reasons: { service: 2 }, start: 5000 }),
      b: req({ reasons: { service: 1, endpoint: 3 }, start: 2000 }),
      want: req({ reasons: { endpoint: 3, service: 3 }, start: 2000 }),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(mergePushRequests(c.a, c.b)).toEqual(c.want);
      expect(mergePushRequests(c.b, c.a)).toEqual(c.want);
    });
  }

  it("is associative and commutative over every order of a queue", () => {
    const queue = [
      req({ configsUpdated: ["ServiceEntry/a/x"], start: 30 }),
      req({ full: true, configsUpdated: ["ServiceEntry/b/y"], reasons: { service: 1 }, start: 10 }),
      req({ configsUpdated: ["ServiceEntry/a/x", "ServiceEntry/c/z"], start: 20 }),
      req({ configsUpdated: null, reasons: { global: 1 }, start: 40 }),
    ];
    const permutations = (xs: PushRequest[]): PushRequest[][] =>
      xs.length <= 1
        ? [xs]
        : xs.flatMap((x, i) => permutations(xs.filter((_, j) => j !== i)).map((p) => [x, ...p]));
    const want = mergeAll(queue);
    expect(want).toEqual({
      full: true,
      configsUpdated: null,
      reasons: { endpoint: 2, global: 1, service: 1 },
      start: 10,
    });
    for (const p of permutations(queue)) {
      expect(mergeAll(p)).toEqual(want);
      // (a·b)·(c·d) = a·(b·(c·d))
      const [a, b, c, d] = p as [PushRequest, PushRequest, PushRequest, PushRequest];
      expect(mergePushRequests(mergePushRequests(a, b), mergePushRequests(c, d))).toEqual(
        mergePushRequests(a, mergePushRequests(b, mergePushRequests(c, d))),
      );
    }
  });

  it("dedupes configs when building a request", () => {
    expect(
      pushRequest({ full: false, configs: ["b", "a", "b"], reason: "endpoint", start: 1 }).configsUpdated,
    ).toEqual(["a", "b"]);
    expect(mergeAll([])).toBeUndefined();
  });

  it("mergeAll equals folding mergePushRequests over the list", () => {
    const arb = fc.record({
      full: fc.boolean(),
      configsUpdated: fc.option(fc.uniqueArray(fc.constantFrom("a", "b", "c", "d"), { maxLength: 3 }), {
        freq: 8,
      }),
      reasons: fc.constantFrom({ endpoint: 1 }, { service: 2 }, { endpoint: 1, service: 1 }),
      start: fc.integer({ min: 0, max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(arb as fc.Arbitrary<PushRequest>, { minLength: 2, maxLength: 12 }), (list) => {
        const folded = list.reduce((acc, r) => mergePushRequests(acc, r));
        expect(mergeAll(list)).toEqual(folded);
      }),
      { numRuns: 300 },
    );
  });
});
