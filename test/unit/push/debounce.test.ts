import { describe, expect, it } from "vitest";
import {
  type DebounceItem,
  type DebounceOptions,
  decideDebounce,
  defaultDebounceOptions,
  parseDuration,
} from "../../../lib/push/debounce.ts";

const opts = (o: Partial<DebounceOptions> = {}): DebounceOptions => ({ ...defaultDebounceOptions, ...o });
const item = (key: string, at: number, full = true): DebounceItem => ({ key, at, full });

describe("decideDebounce", () => {
  const cases: {
    name: string;
    items: DebounceItem[];
    now: number;
    options?: Partial<DebounceOptions>;
    want: ReturnType<typeof decideDebounce>;
  }[] = [
    { name: "empty queue is idle", items: [], now: 0, want: { kind: "idle" } },
    {
      name: "waits for quiet time after the last event",
      items: [item("a", 1000)],
      now: 1050,
      want: { kind: "wait", until: 1100 },
    },
    {
      name: "pushes once quiet for debounceAfter",
      items: [item("a", 1000)],
      now: 1100,
      want: { kind: "push", keys: ["a"] },
    },
    {
      name: "a new event extends the wait",
      items: [item("a", 1000), item("b", 1080)],
      now: 1100,
      want: { kind: "wait", until: 1180 },
    },
    {
      name: "a busy queue still pushes at debounceMax",
      items: [item("a", 0), item("b", 9_950), item("c", 10_000)],
      now: 10_000,
      want: { kind: "push", keys: ["a", "b", "c"] },
    },
    {
      name: "the wait never runs past debounceMax",
      items: [item("a", 0), item("b", 9_950)],
      now: 9_960,
      want: { kind: "wait", until: 10_000 },
    },
    {
      name: "with EDS debounce off, endpoint-only requests go now",
      items: [item("full", 1000), item("eds", 1001, false)],
      now: 1002,
      options: { enableEdsDebounce: false },
      want: { kind: "push", keys: ["eds"] },
    },
    {
      name: "with EDS debounce off, full requests still wait",
      items: [item("full", 1000)],
      now: 1002,
      options: { enableEdsDebounce: false },
      want: { kind: "wait", until: 1100 },
    },
    {
      name: "with EDS debounce on, endpoint-only requests wait",
      items: [item("eds", 1000, false)],
      now: 1002,
      want: { kind: "wait", until: 1100 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(decideDebounce(c.items, c.now, opts(c.options))).toEqual(c.want));
  }

  it("never asks to wait until a time already past", () => {
    for (let now = 0; now < 12_000; now += 7) {
      const d = decideDebounce([item("a", 0), item("b", 5_000)], now, opts());
      if (d.kind === "wait") expect(d.until).toBeGreaterThan(now);
    }
  });
});

describe("parseDuration", () => {
  const cases: [string, number | null][] = [
    ["100ms", 100],
    ["10s", 10_000],
    ["1m30s", 90_000],
    ["1.5s", 1500],
    ["250", 250],
    ["", null],
    ["10x", null],
    ["s", null],
    ["-1s", null],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => {
      const got = parseDuration(text);
      expect(got.ok ? got.ms : null).toBe(want);
    });
  }
});
