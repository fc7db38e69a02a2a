import { describe, expect, it } from "vitest";
import { createDeliverySender, type DeliveryOptions } from "../../../lib/relay/delivery.ts";
import type { PostResult } from "../../../lib/relay/outcome.ts";
import type { Delivery } from "../../../lib/relay/queue.ts";
import { createManualClock } from "./manual-clock.ts";

interface Call {
  at: number;
  delivery: Delivery;
  answer(r: PostResult): void;
}

/** A sender whose POSTs wait until the test answers them. */
function setup(o: Partial<DeliveryOptions> = {}) {
  const clock = createManualClock();
  const calls: Call[] = [];
  const logs: string[] = [];
  const signals: string[] = [];
  const sender = createDeliverySender({
    batchSize: 3,
    batchDelayMs: 100,
    maxQueuedEvents: 1000,
    backoff: { initialMs: 100, maxMs: 1000 },
    random: () => 1,
    timers: clock,
    log: (l) => logs.push(l),
    onOverflow: () => signals.push("overflow"),
    onDrained: () => signals.push("drained"),
    post: (delivery) =>
      new Promise<PostResult>((resolve) => calls.push({ at: clock.now(), delivery, answer: resolve })),
    ...o,
  });
  const ev = (name: string, type = "ADDED") => sender.event("Pod", { type, object: { metadata: { name } } });
  const lines = (c: Call | undefined) =>
    c?.delivery.type === "events"
      ? c.delivery.lines.map((l) => JSON.parse(l).object.metadata.name)
      : c?.delivery;
  const ok = { status: 200, body: "{}" };
  return { clock, calls, logs, signals, sender, ev, lines, ok };
}

describe("batching", () => {
  it("sends a short batch after the delay, a full one at once", async () => {
    const t = setup();
    t.ev("a");
    await t.clock.advance(50);
    t.ev("b");
    expect(t.calls).toHaveLength(0);
    await t.clock.advance(50);
    expect(t.calls.map((c) => [c.at, t.lines(c)])).toEqual([[100, ["a", "b"]]]);
    t.calls[0]?.answer(t.ok);
    for (const n of ["c", "d", "e"]) t.ev(n);
    await t.clock.settle();
    expect(t.calls.map((c) => [c.at, t.lines(c)])).toEqual([
      [100, ["a", "b"]],
      [100, ["c", "d", "e"]],
    ]);
  });

  it("keeps one POST in flight; what arrives meanwhile waits for the next", async () => {
    const t = setup();
    for (const n of ["a", "b", "c", "d", "e", "f", "g"]) t.ev(n);
    await t.clock.advance(1000);
    expect(t.calls).toHaveLength(1);
    t.calls[0]?.answer(t.ok);
    await t.clock.settle();
    expect(t.calls).toHaveLength(2);
    t.calls[1]?.answer(t.ok);
    await t.clock.advance(100);
    expect(t.calls.map(t.lines)).toEqual([["a", "b", "c"], ["d", "e", "f"], ["g"]]);
  });
});

describe("retries", () => {
  it("retries the same batch first, with growing backoff reset by a success; nothing lost or reordered", async () => {
    const t = setup();
    t.ev("a");
    await t.clock.advance(100);
    t.calls[0]?.answer({ status: 503, body: "" });
    t.ev("b");
    await t.clock.advance(100); // first backoff: 100ms (random 1)
    expect(t.calls.map(t.lines)).toEqual([["a"], ["a"]]);
    t.calls[1]?.answer({ error: "ECONNRESET" });
    await t.clock.advance(199);
    expect(t.calls).toHaveLength(2);
    await t.clock.advance(1); // second backoff: 200ms
    expect(t.lines(t.calls[2])).toEqual(["a"]);
    t.calls[2]?.answer(t.ok);
    await t.clock.settle();
    expect(t.lines(t.calls[3])).toEqual(["b"]);
    t.calls[3]?.answer({ status: 500, body: "" });
    await t.clock.advance(100); // reset by the success: 100ms again
    expect(t.lines(t.calls[4])).toEqual(["b"]);
    expect(t.logs.filter((l) => /retrying the same batch in/.test(l))).toHaveLength(3);
  });

  it("401 is retried with backoff and a hint about the token", async () => {
    const t = setup();
    t.ev("a");
    await t.clock.advance(100);
    t.calls[0]?.answer({ status: 401, body: '{"error":"wrong bearer token"}' });
    await t.clock.advance(100);
    expect(t.calls).toHaveLength(2);
    expect(t.logs[0]).toMatch(/401 .*wrong bearer token.*check EDGEPILOT_TOKEN/);
  });
});

describe("rejections", () => {
  it("400 naming an event drops only that event and resends the rest at once", async () => {
    const t = setup();
    for (const n of ["a", "b", "c"]) t.ev(n);
    await t.clock.settle();
    t.calls[0]?.answer({
      status: 400,
      body: '{"error":"is required","index":1,"field":"object.metadata.name"}',
    });
    await t.clock.settle();
    expect(t.calls.map(t.lines)).toEqual([
      ["a", "b", "c"],
      ["a", "c"],
    ]);
    expect(t.logs[0]).toMatch(/ERROR: ingest rejected event 1 .*is required.*"name":"b"/);
    expect(t.sender.stats().rejectedEvents).toBe(1);
  });

  it("400 without an index skips the whole batch, loudly, and goes on", async () => {
    const t = setup();
    for (const n of ["a", "b", "c", "d"]) t.ev(n);
    await t.clock.settle();
    t.calls[0]?.answer({ status: 400, body: '{"error":"malformed"}' });
    await t.clock.advance(100);
    expect(t.calls.map(t.lines)).toEqual([["a", "b", "c"], ["d"]]);
    expect(t.logs[0]).toMatch(
      /ERROR: ingest rejected POST \/v1\/events \(3 event\(s\)\): 400 .*malformed.*skipping/,
    );
  });
});

describe("resyncs", () => {
  it("a list replaces queued entries of its kind, not the batch in flight", async () => {
    const t = setup();
    t.ev("a");
    await t.clock.advance(100);
    t.ev("b");
    t.sender.resync("Pod", { kind: "PodList", metadata: { resourceVersion: "9" }, items: [{}, {}] });
    t.calls[0]?.answer(t.ok);
    await t.clock.settle();
    expect(t.calls[1]?.delivery).toEqual({
      type: "resync",
      kind: "Pod",
      items: 2,
      body: '{"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[{},{}]}',
    });
    expect(t.logs).toContain("relay: Pod: a new list replaced 1 queued entries of that kind");
  });
});

describe("the kinds watched, sent with each resync", () => {
  it("are asked as each resync POST leaves, retries included; event batches carry none", async () => {
    let watching = ["Namespace", "Service"];
    const t = setup({ watching: () => watching });
    t.sender.resync("Service", { kind: "ServiceList", metadata: {}, items: [] });
    await t.clock.settle();
    expect(t.calls[0]?.delivery).toMatchObject({
      type: "resync",
      kind: "Service",
      watching: ["Namespace", "Service"],
    });
    // Discovery found more kinds while the POST failed: the retry says so.
    watching = ["Namespace", "Service", "WorkloadEntry"];
    t.calls[0]?.answer({ status: 503, body: "" });
    await t.clock.advance(100);
    expect(t.calls[1]?.delivery).toMatchObject({
      type: "resync",
      kind: "Service",
      watching: ["Namespace", "Service", "WorkloadEntry"],
    });
    t.calls[1]?.answer(t.ok);
    t.ev("a");
    await t.clock.advance(100);
    expect(t.calls[2]?.delivery).toEqual({ type: "events", lines: [expect.any(String)], kinds: ["Pod"] });
  });

  it("are left out without a source (the delivery as queued)", async () => {
    const t = setup();
    t.sender.resync("Pod", { kind: "PodList", metadata: {}, items: [] });
    await t.clock.settle();
    expect(t.calls[0]?.delivery).not.toHaveProperty("watching");
  });
});

describe("the queue limit", () => {
  it("calls onOverflow once past the limit and onDrained when empty again; nothing is dropped", async () => {
    const t = setup({ maxQueuedEvents: 4 });
    for (const n of ["a", "b", "c", "d", "e", "f"]) t.ev(n);
    expect(t.signals).toEqual(["overflow"]);
    expect(t.logs[0]).toMatch(/queue holds 5 events \(limit 4\).*Stopping every watch/);
    await t.clock.settle();
    t.calls[0]?.answer(t.ok);
    await t.clock.settle();
    t.calls[1]?.answer(t.ok);
    await t.clock.settle();
    expect(t.calls.map(t.lines)).toEqual([
      ["a", "b", "c"],
      ["d", "e", "f"],
    ]);
    expect(t.signals).toEqual(["overflow", "drained"]);
  });
});

describe("flush", () => {
  it("sends a short batch at once and resolves true when empty", async () => {
    const t = setup();
    t.ev("a");
    const done = t.sender.flush(1000);
    await t.clock.settle();
    expect(t.calls.map((c) => c.at)).toEqual([0]);
    t.calls[0]?.answer(t.ok);
    await t.clock.settle();
    await expect(done).resolves.toBe(true);
  });

  it("resolves false at the deadline when ingest keeps failing", async () => {
    const t = setup();
    t.ev("a");
    const done = t.sender.flush(250);
    let result: boolean | undefined;
    done.then((r) => {
      result = r;
    });
    for (let i = 0; i < 5 && result === undefined; i++) {
      await t.clock.settle();
      t.calls.at(-1)?.answer({ status: 503, body: "" });
      await t.clock.advance(100);
    }
    expect(result).toBe(false);
    expect(t.sender.stats().queuedEvents).toBe(1);
  });
});

describe("control-plane restart", () => {
  it("a new instance id in an answer relists every kind at once; the first id and a repeat do not", async () => {
    const restarts: number[] = [];
    const r = setup({ onRestart: () => restarts.push(r.clock.now()) });
    const answer = async (instance: string | undefined, status = 200) => {
      r.ev(`e${r.calls.length}`);
      await r.clock.advance(100);
      r.calls.at(-1)?.answer({ status, body: "{}", ...(instance && { instance }) });
      await r.clock.settle();
    };
    await answer("one");
    await answer("one");
    await answer(undefined); // an answer without the header (an older control plane) says nothing
    expect(restarts).toEqual([]);
    await answer("two", 400); // even a refused batch names the state it reached
    expect(restarts).toEqual([400]);
    expect(r.logs.some((l) => l.includes("state is new (instance two, was one)"))).toBe(true);
    await answer("two");
    expect(restarts).toEqual([400]);
  });

  it("a network failure says nothing about the instance", async () => {
    const restarts: number[] = [];
    const r = setup({ onRestart: () => restarts.push(r.clock.now()) });
    r.ev("a");
    await r.clock.advance(100);
    r.calls[0]?.answer({ status: 200, body: "{}", instance: "one" });
    await r.clock.settle();
    r.ev("b");
    await r.clock.advance(100);
    r.calls[1]?.answer({ error: "connection refused" });
    await r.clock.advance(1000);
    r.calls[2]?.answer({ status: 200, body: "{}", instance: "one" });
    await r.clock.settle();
    expect(restarts).toEqual([]);
    expect(r.calls).toHaveLength(3);
  });
});

describe("heartbeat", () => {
  it("an idle sender posts an empty batch, and a new instance in its answer relists", async () => {
    const restarts: number[] = [];
    const r = setup({ onRestart: () => restarts.push(r.clock.now()) });
    r.sender.heartbeat();
    expect(r.calls.map((c) => c.delivery)).toEqual([{ type: "events", lines: [], kinds: [] }]);
    r.calls[0]?.answer({ status: 200, body: "{}", instance: "one" });
    await r.clock.settle();
    r.sender.heartbeat();
    r.calls[1]?.answer({ status: 200, body: "{}", instance: "two" });
    await r.clock.settle();
    expect(restarts).toEqual([0]);
    expect(r.sender.stats().deliveredEvents).toBe(0);
  });

  it("does nothing while something is queued or in flight", async () => {
    const r = setup();
    r.ev("a");
    r.sender.heartbeat();
    expect(r.calls).toHaveLength(0);
    await r.clock.advance(100);
    r.sender.heartbeat();
    expect(r.calls).toHaveLength(1);
  });
});
