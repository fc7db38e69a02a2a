/**
 * The Lambda debounce loop: the pure decision after each turn (table), and the handler over a real
 * memory store with an injected clock and sleep (no test sleeps): it waits out PILOT_DEBOUNCE_AFTER
 * as the decision says, returns at once when another invocation holds the flush lease, and leaves a
 * turn due past its time to the next invocation. Also the xDS function's call window.
 */
import { describe, expect, it } from "vitest";
import {
  type AfterTurn,
  afterTurn,
  createDebounceHandler,
} from "../../../../functions/lambda/debounce-host.ts";
import { callWindowMs } from "../../../../functions/lambda/xds-host.ts";
import { parseConfig } from "../../../../lib/config.ts";
import { enqueuePush } from "../../../../lib/push/queue.ts";
import { keys } from "../../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../../lib/store/memory.ts";

describe("afterTurn", () => {
  const cases: {
    name: string;
    turn: { nextAt: number | null; busy?: true };
    remaining: number;
    want: AfterTurn;
  }[] = [
    { name: "queue empty", turn: { nextAt: null }, remaining: 60_000, want: { kind: "done" } },
    {
      name: "lease held elsewhere",
      turn: { nextAt: 2_000, busy: true },
      remaining: 60_000,
      want: { kind: "busy" },
    },
    {
      name: "due soon, time left",
      turn: { nextAt: 1_100 },
      remaining: 60_000,
      want: { kind: "wait", ms: 100 },
    },
    { name: "due now", turn: { nextAt: 900 }, remaining: 60_000, want: { kind: "wait", ms: 0 } },
    {
      name: "due past the margin",
      turn: { nextAt: 9_000 },
      remaining: 12_000,
      want: { kind: "leave", dueInMs: 8_000 },
    },
    {
      name: "due just inside the margin",
      turn: { nextAt: 8_000 },
      remaining: 12_000,
      want: { kind: "wait", ms: 7_000 },
    },
  ];
  it.each(cases)("$name", ({ turn, remaining, want }) => {
    expect(afterTurn(turn, 1_000, remaining, 5_000)).toEqual(want);
  });
});

describe("callWindowMs", () => {
  it.each([
    [900_000, 897_000],
    [30_000, 27_000],
    [3_000, 2_000],
    [500, 0],
  ])("%i ms left ▶ %i ms for the call", (remaining, want) => {
    expect(callWindowMs(remaining)).toBe(want);
  });
});

describe("the debounce handler", () => {
  const parsed = parseConfig({ XDS_AUTH: "none", PILOT_DEBOUNCE_AFTER: "100ms" }, { lambda: true });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const config = parsed.config;

  function setup(remainingMs = 60_000) {
    const store = createMemoryStore();
    let clock = 1_000_000;
    const slept: number[] = [];
    const handler = createDebounceHandler({
      config,
      store,
      log: () => undefined,
      now: () => clock,
      sleep: async (ms) => {
        slept.push(ms);
        clock += ms;
      },
    });
    const context = { getRemainingTimeInMillis: () => remainingMs };
    const queue = (at: number) =>
      enqueuePush(store, { full: true, reasons: { service: 1 }, configsUpdated: null, start: at }, at);
    return { store, handler, context, slept, queue, at: () => clock };
  }

  it("waits out PILOT_DEBOUNCE_AFTER, flushes, and ends when nothing is due", async () => {
    const s = setup();
    await s.queue(s.at());
    const summary = await s.handler({ source: "edgepilot.ingest" }, s.context);
    expect(summary).toEqual({ turns: 2, pushes: 1, ended: "done" });
    expect(s.slept).toEqual([100]);
    expect((await s.store.list(keys.pendingPrefix())).entries).toEqual([]);
  });

  it("returns at once when another invocation holds the flush lease", async () => {
    const s = setup();
    await s.queue(s.at() - 500);
    await s.store.put(keys.flushing(), { owner: "another invocation", at: s.at() });
    const summary = await s.handler({}, s.context);
    expect(summary).toEqual({ turns: 1, pushes: 0, ended: "busy" });
    expect(s.slept).toEqual([]);
    expect((await s.store.list(keys.pendingPrefix())).entries).toHaveLength(1);
  });

  it("leaves a turn due past its remaining time to the next invocation", async () => {
    const s = setup(5_050);
    await s.queue(s.at());
    const summary = await s.handler({}, s.context);
    expect(summary).toEqual({ turns: 1, pushes: 0, ended: "leave" });
    expect(s.slept).toEqual([]);
  });
});
