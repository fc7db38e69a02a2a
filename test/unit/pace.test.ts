import { describe, expect, it } from "vitest";
import { createPace } from "../../lib/pace.ts";

describe("createPace", () => {
  const cases = [
    { name: "no yield inside the slice", ticks: [0, 3, 6, 9], want: 0 },
    { name: "one yield once the slice is used", ticks: [0, 4, 11, 12], want: 1 },
    { name: "the slice restarts after a yield", ticks: [0, 10, 15, 21, 31], want: 3 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      let now = 0;
      let yields = 0;
      const pace = createPace({
        sliceMs: 10,
        now: () => now,
        yieldNow: async () => void yields++,
      });
      for (const t of c.ticks) {
        now = t;
        await pace();
      }
      expect(yields).toBe(c.want);
    });
  }
});
