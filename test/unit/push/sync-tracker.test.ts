/**
 * The sync tracker over a Store, on a manual clock: the record is created once per store (so a
 * durable store keeps its instance id and its synced state across a restart), the timeout fires
 * with a warning, and the runtime is woken exactly once when the registry becomes synced.
 */
import { describe, expect, it } from "vitest";
import { createSyncTracker } from "../../../lib/push/sync-tracker.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createManualClock, type ManualClock } from "../relay/manual-clock.ts";

let ids = 0;

function tracker(o: { store?: Store; clock?: ManualClock; cached?: boolean } = {}) {
  const store = o.store ?? createMemoryStore();
  const clock = o.clock ?? createManualClock();
  const lines: string[] = [];
  let woken = 0;
  let turns = 0;
  const t = createSyncTracker({
    store,
    options: { timeoutMs: 60_000, useEndpointSlice: true },
    timers: clock,
    log: (l) => lines.push(l),
    cached: o.cached ?? true,
    requestTurn: () => turns++,
    onOpen: () => woken++,
    newId: () => `id-${++ids}`,
  });
  /** What the runtime's debounce does when poked: a complete turn, now. */
  const turn = () => t.turned(clock.now(), true);
  return { t, store, clock, lines, woken: () => woken, turns: () => turns, turn };
}

describe("createSyncTracker", () => {
  for (const cached of [true, false]) {
    describe(cached ? "cached (Node)" : "reading the store (Worker)", () => {
      it("is not synced at start, and syncs on Services and EndpointSlices of every cluster heard from", async () => {
        const h = tracker({ cached });
        expect((await h.t.start()).synced).toBe(false);
        expect(h.lines).toEqual([
          "sync: registry not synced: no cluster heard from; proxies keep what they hold until it is",
        ]);
        await h.t.ingested("east");
        await h.t.ingested("west", "Service");
        await h.t.ingested("west", "EndpointSlice");
        expect(await h.t.synced()).toBe(false);
        await h.t.ingested("east", "EndpointSlice");
        await h.t.ingested("east", "Service");
        expect((await h.t.state()).synced).toBe(true);
        expect(h.turns()).toBe(1);
        // Synced, but the gate opens only once a turn has published what the sync brought.
        expect(await h.t.synced()).toBe(false);
        expect(h.woken()).toBe(0);
        await h.turn();
        expect(await h.t.synced()).toBe(true);
        expect(h.woken()).toBe(1);
        expect(h.lines.slice(1)).toEqual([
          "sync: cluster west synced",
          "sync: cluster east synced",
          "sync: registry synced (2 cluster(s))",
          "sync: the synced registry is published; proxies may be told to remove what they hold again",
        ]);
        // More turns change nothing; the timeout passing asks one more turn (neither cluster sent a
        // Pod resync: what was held for pods is released, lib/push/held-pods.ts) and wakes no stream.
        await h.turn();
        await h.clock.advance(120_000);
        expect([h.woken(), h.turns()]).toEqual([1, 2]);
        expect(h.lines).toHaveLength(5);
      });

      it("opens when PILOT_SYNC_TIMEOUT passes, with a warning, and wakes the runtime once", async () => {
        const h = tracker({ cached });
        await h.t.start();
        await h.t.ingested("east", "Service");
        await h.clock.advance(59_999);
        expect(await h.t.synced()).toBe(false);
        expect(h.woken()).toBe(0);
        await h.clock.advance(1);
        expect(h.turns()).toBe(1);
        expect(h.lines.at(-1)).toMatch(/^sync: WARNING: PILOT_SYNC_TIMEOUT passed .*still waiting for east/);
        await h.turn();
        expect(h.woken()).toBe(1);
        expect(await h.t.synced()).toBe(true);
        expect((await h.t.state()).timedOut).toBe(true);
      });

      it("asks a turn when a cluster's Pod resync arrives (once), and none at the timeout once every cluster sent one", async () => {
        const h = tracker({ cached });
        await h.t.start();
        await h.t.ingested("east", "Service");
        await h.t.ingested("east", "EndpointSlice");
        expect(h.turns()).toBe(1);
        await h.t.ingested("east", "Pod");
        expect(h.turns()).toBe(2);
        expect((await h.t.state()).clusters).toEqual([
          { cluster: "east", services: true, endpoints: true, synced: true, pods: true },
        ]);
        await h.t.ingested("east", "Pod");
        await h.clock.advance(120_000);
        expect(h.turns()).toBe(2);
      });
    });
  }

  it("a durable store: a restarted tracker loads the record, synced at once, with the same instance id", async () => {
    const first = tracker();
    await first.t.start();
    await first.t.ingested("east", "Service");
    await first.t.ingested("east", "EndpointSlice");
    await first.turn();
    const id = await first.t.instance();
    first.t.stop();
    const restarted = tracker({ store: first.store, clock: first.clock });
    const state = await restarted.t.start();
    expect(state).toMatchObject({ synced: true, published: true });
    expect(await restarted.t.synced()).toBe(true);
    expect(await restarted.t.instance()).toBe(id);
    expect(restarted.lines).toEqual([
      "sync: cluster east synced",
      "sync: registry synced (1 cluster(s))",
      "sync: the synced registry is published; proxies may be told to remove what they hold again",
    ]);
  });

  it("a memory store: a restart is a new store, so a new instance id and not synced", async () => {
    const first = tracker();
    await first.t.start();
    await first.t.ingested("east", "Service");
    await first.t.ingested("east", "EndpointSlice");
    const restarted = tracker({ clock: first.clock });
    expect((await restarted.t.start()).synced).toBe(false);
    expect(await restarted.t.instance()).not.toBe(await first.t.instance());
  });

  it("counts the timeout from when the state began, not from the restart", async () => {
    const first = tracker();
    await first.t.start();
    await first.clock.advance(40_000);
    first.t.stop();
    const restarted = tracker({ store: first.store, clock: first.clock });
    expect((await restarted.t.start()).synced).toBe(false);
    await restarted.clock.advance(20_000);
    expect(restarted.turns()).toBe(1);
    await restarted.turn();
    expect(await restarted.t.synced()).toBe(true);
    expect(restarted.woken()).toBe(1);
  });
});

describe("a batch cut off mid-commit (kill -9 on a durable store)", () => {
  it("starts a new state lifetime: a new instance id, not synced, the marker cleared, a warning", async () => {
    const store = createMemoryStore();
    const first = tracker({ store });
    await first.t.start();
    await first.t.ingested("east", "Service");
    await first.t.ingested("east", "EndpointSlice");
    await first.turn();
    expect(await first.t.synced()).toBe(true);
    const before = await first.t.instance();
    // What lib/ingest/atomic.ts leaves behind when the process dies between its writes.
    await store.put(keys.commitMarker(), { at: 1, writes: 42 });

    const next = tracker({ store });
    const state = await next.t.start();
    expect(state.synced).toBe(false);
    expect(await next.t.instance()).not.toBe(before);
    expect(await store.get(keys.commitMarker())).toBeUndefined();
    expect(next.lines[0]).toMatch(/WARNING: an ingest batch of 42 write\(s\) was cut off mid-commit/);
  });

  it("is left alone by a tracker that is not the store's sole writer (a Worker isolate)", async () => {
    const store = createMemoryStore();
    const first = tracker({ store, cached: false });
    await first.t.start();
    const before = await first.t.instance();
    await store.put(keys.commitMarker(), { at: 1, writes: 3 });
    const next = tracker({ store, cached: false });
    await next.t.start();
    expect(await next.t.instance()).toBe(before);
    expect(await store.get(keys.commitMarker())).toBeDefined();
  });
});
