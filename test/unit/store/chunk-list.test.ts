import { describe, expect, it } from "vitest";
import { createChunkList } from "../../../lib/store/chunk-list.ts";

describe("chunk list (the staged view's keys in staging order)", () => {
  it("reads back every item pushed, across chunk boundaries", () => {
    const list = createChunkList<number>();
    for (let i = 0; i < 10_000; i++) list.push(i * 3);
    expect(list.length).toBe(10_000);
    for (const i of [0, 1, 4095, 4096, 4097, 8191, 8192, 9999]) expect(list.at(i)).toBe(i * 3);
  });
});
