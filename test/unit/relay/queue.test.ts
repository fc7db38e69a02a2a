import { describe, expect, it } from "vitest";
import { createDeliveryQueue, type QueueOptions } from "../../../lib/relay/queue.ts";

const make = (o: Partial<QueueOptions> = {}) =>
  createDeliveryQueue({ batchSize: 3, batchDelayMs: 100, ...o });
const ev = (name: string) => JSON.stringify({ type: "ADDED", object: { metadata: { name } } });

describe("decide", () => {
  const cases: {
    name: string;
    fill: (q: ReturnType<typeof make>) => void;
    now: number;
    flushAll?: boolean;
    want: ReturnType<ReturnType<typeof make>["decide"]>;
  }[] = [
    { name: "empty ▶ idle", fill: () => {}, now: 0, want: { kind: "idle" } },
    {
      name: "a short run waits for the delay from its first event",
      fill: (q) => {
        q.pushEvent("Pod", ev("a"), 10);
        q.pushEvent("Pod", ev("b"), 50);
      },
      now: 60,
      want: { kind: "wait", ms: 50 },
    },
    {
      name: "a short run is sent once the delay passed",
      fill: (q) => q.pushEvent("Pod", ev("a"), 10),
      now: 110,
      want: { kind: "send" },
    },
    {
      name: "a full run is sent at once",
      fill: (q) => {
        for (const n of ["a", "b", "c"]) q.pushEvent("Pod", ev(n), 0);
      },
      now: 0,
      want: { kind: "send" },
    },
    {
      name: "a run ended by a resync cannot grow, so it is sent at once",
      fill: (q) => {
        q.pushEvent("Pod", ev("a"), 0);
        q.pushResync("Service", "{}", 0, 0);
      },
      now: 0,
      want: { kind: "send" },
    },
    {
      name: "a resync is sent at once",
      fill: (q) => q.pushResync("Pod", "{}", 0, 0),
      now: 0,
      want: { kind: "send" },
    },
    {
      name: "flushAll sends a short run at once",
      fill: (q) => q.pushEvent("Pod", ev("a"), 0),
      now: 0,
      flushAll: true,
      want: { kind: "send" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const q = make();
      c.fill(q);
      expect(q.decide(c.now, c.flushAll ?? false)).toEqual(c.want);
    });
  }
});

describe("take, ack and retry", () => {
  it("cuts batches of at most batchSize, in order; a resync is a delivery of its own", () => {
    const q = make({ batchSize: 2 });
    for (const n of ["a", "b", "c"]) q.pushEvent("Pod", ev(n), 0);
    q.pushResync("Service", '{"items":[]}', 0, 0);
    q.pushEvent("Pod", ev("d"), 0);
    const seen: unknown[] = [];
    for (let d = q.take(); d !== undefined; d = q.take()) {
      seen.push(d.type === "events" ? d.lines.map((l) => JSON.parse(l).object.metadata.name) : d.kind);
      q.ack();
    }
    expect(seen).toEqual([["a", "b"], ["c"], "Service", ["d"]]);
    expect(q.events).toBe(0);
    expect(q.length).toBe(0);
  });

  it("a batch in flight is taken again unchanged until acked, even as events arrive behind it", () => {
    const q = make();
    q.pushEvent("Pod", ev("a"), 0);
    const first = q.take();
    q.pushEvent("Pod", ev("b"), 1);
    expect(q.inFlight).toBe(true);
    expect(q.decide(1, false)).toEqual({ kind: "send" });
    expect(q.take()).toEqual(first);
    q.ack();
    expect(q.take()).toMatchObject({ type: "events", lines: [ev("b")] });
  });

  it("dropEvent removes one rejected event and keeps the rest of the batch in flight", () => {
    const q = make();
    for (const n of ["a", "b", "c"]) q.pushEvent("Pod", ev(n), 0);
    q.take();
    expect(q.dropEvent(1)).toBe(ev("b"));
    expect(q.dropEvent(7)).toBeUndefined();
    expect(q.take()).toMatchObject({ lines: [ev("a"), ev("c")], kinds: ["Pod", "Pod"] });
    expect(q.events).toBe(2);
  });
});

describe("pushResync", () => {
  it("drops queued entries of its kind that are not in flight, and nothing else", () => {
    const q = make({ batchSize: 1 });
    q.pushEvent("Pod", ev("in-flight"), 0);
    q.take();
    q.pushEvent("Pod", ev("p1"), 0);
    q.pushEvent("Service", ev("s1"), 0);
    expect(q.pushResync("Pod", "old list", 0, 0)).toBe(1); // p1
    q.pushEvent("Pod", ev("p2"), 0);
    expect(q.pushResync("Pod", "new list", 1, 0)).toBe(2); // the old list and p2
    expect(q.events).toBe(2);
    const seen: unknown[] = [];
    for (let d = q.take(); d !== undefined; d = q.take()) {
      seen.push(d.type === "events" ? d.lines[0] : d.body);
      q.ack();
    }
    expect(seen).toEqual([ev("in-flight"), ev("s1"), "new list"]);
  });
});

describe("a long queue", () => {
  it("stays in order through many acks (compaction)", () => {
    const q = make({ batchSize: 7 });
    for (let i = 0; i < 5000; i++) q.pushEvent("Pod", String(i), 0);
    const out: string[] = [];
    for (let d = q.take(); d !== undefined; d = q.take()) {
      if (d.type === "events") out.push(...d.lines);
      q.ack();
    }
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => String(i)));
  });
});
