import { describe, expect, it } from "vitest";
import { backoffDelay, createBackoff, defaultBackoff } from "../../../lib/relay/backoff.ts";

describe("backoffDelay", () => {
  const cases: { attempt: number; random: number; want: number }[] = [
    { attempt: 0, random: 1, want: 100 },
    { attempt: 0, random: 0, want: 50 },
    { attempt: 1, random: 1, want: 200 },
    { attempt: 3, random: 0.5, want: 600 },
    { attempt: 8, random: 1, want: 25_600 },
    { attempt: 9, random: 1, want: 30_000 },
    { attempt: 9, random: 0, want: 15_000 },
    { attempt: 5000, random: 1, want: 30_000 },
  ];
  for (const c of cases) {
    it(`attempt ${c.attempt}, random ${c.random} ▶ ${c.want}ms`, () => {
      expect(backoffDelay(c.attempt, defaultBackoff, () => c.random)).toBe(c.want);
    });
  }

  it("never exceeds the cap and never shrinks below half the ceiling", () => {
    for (let a = 0; a < 40; a++) {
      for (const r of [0, 0.3, 0.999]) {
        const d = backoffDelay(a, defaultBackoff, () => r);
        const ceiling = Math.min(30_000, 100 * 2 ** a);
        expect(d).toBeLessThanOrEqual(ceiling);
        expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      }
    }
  });
});

describe("createBackoff", () => {
  it("grows with each failure and starts over after reset", () => {
    const b = createBackoff({ initialMs: 10, maxMs: 1000 }, () => 1);
    expect([b.next(), b.next(), b.next()]).toEqual([10, 20, 40]);
    expect(b.failures).toBe(3);
    b.reset();
    expect(b.failures).toBe(0);
    expect(b.next()).toBe(10);
  });
});
