import { describe, expect, it } from "vitest";
import {
  initialKindState,
  type KindAction,
  type KindContext,
  type KindInput,
  type KindState,
  step,
} from "../../../lib/relay/kind-machine.ts";
import type { KubeList } from "../../../lib/relay/list.ts";

/** Drives the machine through inputs, collecting every action; the clock is a variable. */
function machine(o: Partial<KindContext> = {}) {
  let now = 1000;
  let state: KindState = initialKindState();
  const ctx: KindContext = {
    backoff: { initialMs: 100, maxMs: 800 },
    random: () => 1,
    now: () => now,
    healthyWatchMs: 1000,
    ...o,
  };
  return {
    send(input: KindInput | ((s: KindState) => KindInput)): KindAction[] {
      const [next, actions] = step(state, typeof input === "function" ? input(state) : input, ctx);
      state = next;
      return actions;
    },
    get state() {
      return state;
    },
    tick(ms: number) {
      now += ms;
    },
    get now() {
      return now;
    },
  };
}

const list = (rv: string, n = 0): KubeList => ({
  kind: "PodList",
  metadata: { resourceVersion: rv },
  items: Array.from({ length: n }, () => ({})),
});
const obj = (rv: string) => ({ metadata: { name: "a", namespace: "default", resourceVersion: rv } });
const expired = { type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } };
const without = (actions: KindAction[]) => actions.filter((a) => a.do !== "log");

/** A machine that has listed at rv 10 and is watching (op 2). */
function watching(o: Partial<KindContext> = {}) {
  const m = machine(o);
  m.send({ type: "start" });
  m.send({ type: "listed", op: 1, list: list("10") });
  return m;
}

describe("list then watch", () => {
  it("start lists; the list is posted as a resync and watched from its resourceVersion", () => {
    const m = machine();
    expect(m.send({ type: "start" })).toEqual([{ do: "list", op: 1 }]);
    const l = list("10", 2);
    expect(m.send({ type: "listed", op: 1, list: l })).toEqual([
      { do: "resync", list: l },
      { do: "watch", op: 2, rv: "10", now: 1000 },
    ]);
    expect(m.state).toMatchObject({ phase: "watching", rv: "10", op: 2 });
  });

  it("events are passed on and move the resourceVersion; bookmarks move it silently", () => {
    const m = watching();
    const added = { type: "ADDED", object: obj("11") };
    expect(m.send({ type: "watchEvent", op: 2, event: added })).toEqual([{ do: "event", event: added }]);
    expect(m.send({ type: "watchEvent", op: 2, event: { type: "BOOKMARK", object: obj("15") } })).toEqual([]);
    expect(m.state.rv).toBe("15");
  });

  it("ignores inputs about an operation that is no longer current", () => {
    const m = watching();
    const before = m.state;
    expect(m.send({ type: "watchEvent", op: 1, event: { type: "ADDED", object: obj("99") } })).toEqual([]);
    expect(m.send({ type: "watchEnded", op: 1, now: m.now, error: "x" })).toEqual([]);
    expect(m.send({ type: "timer", op: 7 })).toEqual([]);
    expect(m.state).toBe(before);
  });
});

describe("a watch that ends", () => {
  it("cleanly after an event or a healthy while: watched again at once from the last resourceVersion", () => {
    const m = watching();
    m.send({ type: "watchEvent", op: 2, event: { type: "MODIFIED", object: obj("12") } });
    expect(m.send({ type: "watchEnded", op: 2, now: m.now })).toEqual([
      { do: "watch", op: 3, rv: "12", now: 1000 },
    ]);
    m.tick(1000);
    expect(m.send({ type: "watchEnded", op: 3, now: m.now })).toEqual([
      { do: "watch", op: 4, rv: "12", now: 2000 },
    ]);
  });

  it("at once without an event, or with an error: backoff that grows, then watched from the last resourceVersion", () => {
    const m = watching();
    const a1 = m.send({ type: "watchEnded", op: 2, now: m.now });
    expect(a1[0]).toMatchObject({
      do: "log",
      line: expect.stringMatching(/closed at once.*watching again in 100ms/),
    });
    expect(without(a1)).toEqual([{ do: "wait", op: 3, ms: 100 }]);
    expect(m.send({ type: "timer", op: 3 })).toEqual([{ do: "watch", op: 4, rv: "10", now: 1000 }]);
    expect(without(m.send({ type: "watchEnded", op: 4, now: m.now, error: "ECONNRESET" }))).toEqual([
      { do: "wait", op: 5, ms: 200 },
    ]);
    m.send({ type: "timer", op: 5 });
    expect(without(m.send({ type: "watchEnded", op: 6, now: m.now, status: 500, error: "boom" }))).toEqual([
      { do: "wait", op: 7, ms: 400 },
    ]);
    m.send({ type: "timer", op: 7 });
    // An event proves the watch healthy: the next failure starts the backoff over.
    m.send({ type: "watchEvent", op: 8, event: { type: "ADDED", object: obj("20") } });
    expect(without(m.send({ type: "watchEnded", op: 8, now: m.now, error: "reset" }))).toEqual([
      { do: "wait", op: 9, ms: 100 },
    ]);
  });

  it("with 410 (HTTP or an ERROR event) relists at once", () => {
    const m = watching();
    expect(without(m.send({ type: "watchEnded", op: 2, now: m.now, status: 410, error: "Gone" }))).toEqual([
      { do: "list", op: 3 },
    ]);
    m.send({ type: "listed", op: 3, list: list("30") });
    const actions = m.send({ type: "watchEvent", op: 4, event: expired });
    expect(actions[0]).toMatchObject({
      line: expect.stringMatching(/resourceVersion 30 expired.*relisting/),
    });
    expect(without(actions)).toEqual([{ do: "list", op: 5 }]);
  });

  it("with another ERROR event backs off and watches again", () => {
    const m = watching();
    const error = {
      type: "ERROR",
      object: { kind: "Status", code: 500, reason: "InternalError", message: "etcd" },
    };
    const actions = m.send({ type: "watchEvent", op: 2, event: error });
    expect(actions[0]).toMatchObject({ line: expect.stringMatching(/500 InternalError etcd/) });
    expect(without(actions)).toEqual([{ do: "wait", op: 3, ms: 100 }]);
    expect(m.state.after).toBe("watch");
  });
});

describe("a list that fails", () => {
  it("is retried after a growing backoff; 403 says to check RBAC", () => {
    const m = machine();
    m.send({ type: "start" });
    const a = m.send({ type: "listFailed", op: 1, status: 403, message: "forbidden" });
    expect(a[0]).toMatchObject({
      line: expect.stringMatching(/403 forbidden.*ClusterRole.*relisting in 100ms/),
    });
    expect(m.send({ type: "timer", op: 2 })).toEqual([{ do: "list", op: 3 }]);
    expect(without(m.send({ type: "listFailed", op: 3, message: "ECONNREFUSED" }))).toEqual([
      { do: "wait", op: 4, ms: 200 },
    ]);
    m.send({ type: "timer", op: 4 });
    m.send({ type: "listed", op: 5, list: list("40") });
    expect(m.state.failures).toBe(0);
  });
});

describe("commands", () => {
  const cases: {
    name: string;
    setup: (m: ReturnType<typeof machine>) => void;
    input: KindInput;
    want: KindAction[];
  }[] = [
    {
      name: "resync while watching relists",
      setup: () => {},
      input: { type: "resync" },
      want: [{ do: "list", op: 3 }],
    },
    {
      name: "resync while listing does nothing (that list is posted anyway)",
      setup: (m) => m.send({ type: "resync" }),
      input: { type: "resync" },
      want: [],
    },
    {
      name: "resync while waiting to watch relists",
      setup: (m) => m.send({ type: "watchEnded", op: 2, now: 0, error: "x" }),
      input: { type: "resync" },
      want: [{ do: "list", op: 4 }],
    },
    {
      name: "resync while waiting to list does nothing",
      setup: (m) => {
        m.send({ type: "resync" });
        m.send({ type: "listFailed", op: 3, message: "x" });
      },
      input: { type: "resync" },
      want: [],
    },
    { name: "pause cancels the watch", setup: () => {}, input: { type: "pause" }, want: [{ do: "cancel" }] },
    {
      name: "resume after a pause relists",
      setup: (m) => m.send({ type: "pause" }),
      input: { type: "resume" },
      want: [{ do: "list", op: 4 }],
    },
    {
      name: "resync while paused does nothing (resume relists)",
      setup: (m) => m.send({ type: "pause" }),
      input: { type: "resync" },
      want: [],
    },
    { name: "resume while watching does nothing", setup: () => {}, input: { type: "resume" }, want: [] },
    { name: "stop cancels", setup: () => {}, input: { type: "stop" }, want: [{ do: "cancel" }] },
    {
      name: "after stop nothing happens",
      setup: (m) => m.send({ type: "stop" }),
      input: { type: "resume" },
      want: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const m = watching();
      c.setup(m);
      expect(m.send(c.input)).toEqual(c.want);
    });
  }

  it("a kind paused before it started lists on resume", () => {
    const m = machine();
    expect(m.send({ type: "pause" })).toEqual([{ do: "cancel" }]);
    expect(m.send({ type: "start" })).toEqual([]);
    expect(m.send({ type: "resume" })).toEqual([{ do: "list", op: 2 }]);
  });
});
