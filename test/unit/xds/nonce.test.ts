/** Response nonces: never repeated within a stream, distinct across streams, short enough to encode fast. */
import { describe, expect, it } from "vitest";
import { createNonces } from "../../../lib/xds/nonce.ts";

describe("createNonces", () => {
  it("never repeats within a stream, differs between streams, and stays within 32 characters", () => {
    const a = createNonces();
    const b = createNonces();
    const fromA = Array.from({ length: 10_000 }, () => a());
    const fromB = Array.from({ length: 100 }, () => b());
    expect(new Set(fromA).size).toBe(fromA.length);
    for (const n of fromB) expect(fromA).not.toContain(n);
    for (const n of [...fromA, ...fromB]) expect(n.length).toBeLessThanOrEqual(32);
    expect(fromA[0]).toMatch(/^[0-9a-f]{16}-0$/);
  });
});
