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
});
