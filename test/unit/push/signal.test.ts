import { describe, expect, it } from "vitest";
import { createPushSignal, maxGatheredChanges } from "../../../lib/push/signal.ts";
import type { PushListener, ResourceChange } from "../../../lib/resources/changes.ts";

/** A signal on a clock each listener call moves by `costMs`, with yields that run only when `resume` says. */
function sliced(costMs = 1, options: { sliceMs?: number; minPerSlice?: number } = {}) {
  let t = 0;
  const waiting: (() => void)[] = [];
  const errors: unknown[] = [];
  const signal = createPushSignal((e) => errors.push(e), {
    now: () => t,
    yieldNow: () => new Promise<void>((resolve) => waiting.push(resolve)),
    ...options,
  });
  const seen: { listener: number; version: number; changes: readonly ResourceChange[] | undefined }[] = [];
  const listen = (n: number) => {
    const unsubscribe = signal.subscribe(({ version, changes }) => {
      t += costMs;
      seen.push({ listener: n, version, changes });
    });
    return unsubscribe;
  };
  /** Lets the pending yield return; resolves once the slice after it ran. */
  const resume = async () => {
    const next = waiting.shift();
    if (!next) throw new Error("no slice waits");
    next();
    await Promise.resolve();
    await Promise.resolve();
  };
  return { signal, seen, listen, resume, waiting, errors };
}

const change = (name: string): ResourceChange =>
  ({
    kind: "upsert",
    typeUrl: "t",
    name,
    version: "v",
    bytes: new Uint8Array(),
  }) as unknown as ResourceChange;

describe("push signal", () => {
  it("tells a few listeners before emit returns, in subscription order, the same changes array to each", () => {
    const s = sliced(10); // each far over the slice: fewer than minPerSlice are told at once anyway
    for (let n = 0; n < 3; n++) s.listen(n);
    const changes = [change("a")];
    s.signal.emit({ version: 1, changes });
    expect(s.seen.map((x) => x.listener)).toEqual([0, 1, 2]);
    expect(s.seen.every((x) => x.changes === changes && x.version === 1)).toBe(true);
    expect(s.waiting).toHaveLength(0);
  });

  it("tells many listeners in slices: the first before emit returns, the rest after each yield", async () => {
    const s = sliced(1, { sliceMs: 2, minPerSlice: 16 });
    for (let n = 0; n < 40; n++) s.listen(n);
    s.signal.emit({ version: 1, changes: [change("a")] });
    expect(s.seen).toHaveLength(16);
    expect(s.waiting).toHaveLength(1);
    await s.resume();
    expect(s.seen).toHaveLength(32);
    await s.resume();
    expect(s.seen.map((x) => x.listener)).toEqual([...Array(40).keys()]);
    expect(s.waiting).toHaveLength(0);
  });

  it("slices by time once minPerSlice were told: cheap listeners go many to a slice", async () => {
    const s = sliced(0.1, { sliceMs: 2, minPerSlice: 4 });
    for (let n = 0; n < 50; n++) s.listen(n);
    s.signal.emit({ version: 1, changes: [] });
    // 0.1 ms each: the 21st call would start at 2 ms.
    expect(s.seen).toHaveLength(20);
    await s.resume();
    await s.resume();
    expect(s.seen).toHaveLength(50);
  });

  it("keeps every listener's pushes in order; pushes announced meanwhile gather into one waiting push", async () => {
    const s = sliced(1, { sliceMs: 2, minPerSlice: 16 });
    for (let n = 0; n < 20; n++) s.listen(n);
    const [c1, c2, c3] = [[change("a")], [change("b")], [change("c")]];
    s.signal.emit({ version: 1, changes: c1 });
    s.signal.emit({ version: 2, changes: c2 });
    s.signal.emit({ version: 3, changes: c3 });
    expect(s.seen).toHaveLength(16);
    await s.resume(); // the last 4 of push 1, then push 2+3 to the first 12
    await s.resume();
    for (let n = 0; n < 20; n++) {
      const mine = s.seen.filter((x) => x.listener === n);
      expect(mine.map((x) => x.version)).toEqual([1, 3]);
      expect(mine[0]?.changes).toBe(c1);
      expect(mine[1]?.changes).toEqual([...c2, ...c3]);
    }
    // The gathered list is the signal's own: neither announced array was changed.
    expect(c2).toHaveLength(1);
  });

  it("a push that gathers an unknown one, or more than maxGatheredChanges, says unknown", async () => {
    const s = sliced(1, { sliceMs: 2, minPerSlice: 16 });
    for (let n = 0; n < 20; n++) s.listen(n);
    s.signal.emit({ version: 1, changes: [change("a")] });
    s.signal.emit({ version: 2, changes: [change("b")] });
    s.signal.emit({ version: 3 });
    s.signal.emit({ version: 4, changes: [change("c")] });
    while (s.waiting.length > 0) await s.resume();
    expect(s.seen.filter((x) => x.listener === 0).map((x) => [x.version, x.changes])).toEqual([
      [1, [change("a")]],
      [4, undefined],
    ]);

    const big = sliced(1, { sliceMs: 2, minPerSlice: 16 });
    for (let n = 0; n < 20; n++) big.listen(n);
    big.signal.emit({ version: 1, changes: [] });
    big.signal.emit({
      version: 2,
      changes: Array.from({ length: maxGatheredChanges }, (_, i) => change(`n${i}`)),
    });
    big.signal.emit({ version: 3, changes: [change("one more")] });
    while (big.waiting.length > 0) await big.resume();
    expect(big.seen.filter((x) => x.listener === 19).map((x) => x.changes)).toEqual([[], undefined]);
  });

  it("tells a push to the listeners of its announcement, less those that left before their turn", async () => {
    const s = sliced(1, { sliceMs: 2, minPerSlice: 16 });
    const leave: (() => void)[] = [];
    for (let n = 0; n < 20; n++) leave.push(s.listen(n));
    s.signal.emit({ version: 1, changes: [] });
    s.signal.emit({ version: 2, changes: [] });
    (leave[18] as () => void)();
    s.listen(99); // after push 2 was announced: not one of its listeners
    s.listen(100);
    s.signal.emit({ version: 3, changes: [] }); // joins push 2, for the listeners of now
    while (s.waiting.length > 0) await s.resume();
    expect(s.seen.filter((x) => x.listener === 18)).toHaveLength(0);
    expect(s.seen.filter((x) => x.listener === 0).map((x) => x.version)).toEqual([1, 3]);
    expect(s.seen.filter((x) => x.listener === 99).map((x) => x.version)).toEqual([3]);
    expect(s.signal.size).toBe(21);
  });

  it("a listener that throws is reported; the others are still told", () => {
    const s = sliced(0);
    s.listen(0);
    const boom: PushListener = () => {
      throw new Error("boom");
    };
    s.signal.subscribe(boom);
    s.listen(2);
    s.signal.emit({ version: 1, changes: [] });
    expect(s.seen.map((x) => x.listener)).toEqual([0, 2]);
    expect(String(s.errors[0])).toContain("boom");
  });
});
