/**
 * Pushes over a shared store, two mesh cores over ONE memory store on one manual clock (no
 * sleeps): a push one core made reaches the other's feed within one poll interval with the same
 * versions and names and never twice, two cores turning at once flush once, a push a dead core
 * queued is flushed by the other, the sync gate one core opened opens on the other, and a core
 * that died mid-commit is recovered by the other (a new state lifetime).
 */
import { describe, expect, it } from "vitest";
import { IngestBusyError } from "../../../lib/core/ingest-lease.ts";
import type { MeshCore } from "../../../lib/core/mesh-core.ts";
import { validateList } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { PushVersion } from "../../../lib/resources/changes.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { CommitError } from "../../../lib/store/staged.ts";
import { endpointSlice, event, pod, service } from "../../e2e/support/kube.ts";
import { advanceUntilSettled, createManualClock } from "../relay/manual-clock.ts";
import { ingestEvents, instance } from "./shared-instances.ts";

const port = { name: "grpc", port: 9080 };
const interval = 1000;

/** Two started instances over one store. */
async function pair(store: Store = createMemoryStore()) {
  const clock = createManualClock();
  const a = instance(store, clock, "a", { syncTimeoutMs: 600_000 });
  const b = instance(store, clock, "b", { syncTimeoutMs: 600_000 });
  await a.core.start();
  await b.core.start();
  return { store, clock, a, b };
}

const events = (core: MeshCore, ...raw: unknown[]) => ingestEvents(core, raw);

const reviews = (...ips: string[]) => [
  event("ADDED", service("reviews", "default", [port])),
  ...ips.map((ip) => event("ADDED", pod("reviews", "default", ip))),
  event(
    "ADDED",
    endpointSlice(
      "reviews-1",
      "reviews",
      "default",
      port,
      ips.map((ip) => ({ ip, ready: true })),
    ),
  ),
];

const pushVersion = async (store: Store) => (await store.get<PushVersion>(keys.pushVersion()))?.value.version;

describe("pushes over a shared store", () => {
  it("a push one core made reaches the other's feed within one interval, same versions and names, once", async () => {
    const { clock, a, b } = await pair();
    await events(a.core, ...reviews("10.1.0.1"));
    await clock.advance(defaultDebounceOptions.debounceAfter);
    const turn = await a.core.turn();
    expect(turn.flushes.map((f) => f.version)).toEqual([1]);
    expect(a.heard).toHaveLength(1);
    expect(a.heard[0]).toContain("outbound|9080||reviews.default.svc.cluster.local@");
    expect(b.heard).toEqual([]);
    await clock.advance(interval);
    expect(b.heard).toEqual(a.heard);

    // The other way round: b's own push is announced once on b, and reaches a.
    await events(b.core, event("MODIFIED", endpointSlice("reviews-1", "reviews", "default", port, [])));
    await clock.advance(defaultDebounceOptions.debounceAfter);
    await b.core.turn();
    await clock.advance(interval * 3);
    expect(b.heard).toHaveLength(2);
    expect(a.heard).toEqual(b.heard);
    expect(b.heard[1]).toMatch(/^2:/);
  });

  it("a core announcing its own push first announces the one another core made before it", async () => {
    const { clock, a, b } = await pair();
    await events(a.core, ...reviews("10.1.0.1"));
    await clock.advance(defaultDebounceOptions.debounceAfter);
    await a.core.turn();
    // b pushes before its follower looked: push 1 (a's) goes out on b before push 2 (its own).
    await events(b.core, event("ADDED", service("ratings", "default", [port])));
    await clock.advance(defaultDebounceOptions.debounceAfter);
    await b.core.turn();
    expect(b.heard.map((h) => h.split(":")[0])).toEqual(["1", "2"]);
    expect(b.heard[0]).toBe(a.heard[0]);
  });

  it("two cores turning at once: one flushes, the other finds the flush lease busy; one push", async () => {
    const { store, clock, a, b } = await pair();
    await events(a.core, ...reviews("10.1.0.1"));
    await clock.advance(defaultDebounceOptions.debounceAfter);
    const [ta, tb] = await Promise.all([a.core.turn(), b.core.turn()]);
    const flushes = [...ta.flushes, ...tb.flushes];
    expect(flushes.filter((f) => f.changes.length > 0)).toHaveLength(1);
    expect(await pushVersion(store)).toBe(1);
    await clock.advance(interval * 2);
    for (const x of [a, b]) await x.core.turn();
    expect(await pushVersion(store)).toBe(1);
    expect(a.heard).toHaveLength(1);
    expect(b.heard).toEqual(a.heard);
  });

  it("a push a core queued before it died is flushed by the other (its follower asks for a turn)", async () => {
    const { store, clock, a, b } = await pair();
    await events(a.core, ...reviews("10.1.0.1"));
    a.core.stop(); // dies before its turn
    const asked = b.turnsAsked();
    await clock.advance(interval);
    expect(b.turnsAsked()).toBeGreaterThan(asked);
    const turn = await b.core.turn();
    expect(turn.flushes.map((f) => f.version)).toEqual([1]);
    expect(await pushVersion(store)).toBe(1);
    expect(b.heard).toHaveLength(1);
  });

  it("the sync gate one core opened opens on the other within one interval, waking its streams", async () => {
    const { clock, a, b } = await pair();
    for (const kind of ["Service", "EndpointSlice"]) {
      const list = await validateList(kind, {
        kind: `${kind}List`,
        metadata: { resourceVersion: "1" },
        items: [],
      });
      if (!list.ok) throw new Error(list.error.message);
      await a.core.ingest.resync("east", list.value);
    }
    await clock.advance(defaultDebounceOptions.debounceAfter);
    await a.core.turn();
    expect(await a.core.sync.synced()).toBe(true);
    expect(a.heard).toContain("0:all");
    await clock.advance(interval);
    expect(b.heard).toContain("0:all");
    // Answered from the record last read: no store read per call.
    expect(b.core.sync.synced()).toBe(true);
  });
});

/** `base` as a core that dies mid-commit sees it: after `die()`, the `after`-th put and every call after it throw. */
function dying(base: Store) {
  let armed = false;
  let dead = false;
  let puts = 0;
  const check = () => {
    if (dead) throw new Error("store: connection lost (the process died)");
  };
  const live = async <T>(call: () => Promise<T>): Promise<T> => {
    check();
    return call();
  };
  const store: Store = {
    get: (k) => live(() => base.get(k)),
    getMany: (ks) => live(() => base.getMany(ks)),
    put: async (k, v, o) => {
      check();
      // The second state write of a commit (the marker went first): the process dies here.
      if (armed && !k.startsWith("meta/") && ++puts === 2) {
        dead = true;
        check();
      }
      return base.put(k, v, o);
    },
    delete: (k, o) => live(() => base.delete(k, o)),
    list: (p, o) => live(() => base.list(p, o)),
  };
  const die = () => {
    armed = true;
  };
  return { store, die };
}

describe("a core that dies mid-commit", () => {
  it("is recovered by the other: it waits, gives up 503-style, then takes over after expiry and begins a new state lifetime", async () => {
    const base = createMemoryStore();
    const clock = createManualClock();
    const crashing = dying(base);
    const a = instance(crashing.store, clock, "a", { syncTimeoutMs: 600_000 });
    const b = instance(base, clock, "b", { syncTimeoutMs: 600_000 });
    await a.core.start();
    await b.core.start();
    const before = await b.core.sync.instance();
    crashing.die();
    const err = await events(a.core, ...reviews("10.1.0.1")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommitError);
    expect((err as CommitError).rolledBack).toBe(false);
    // What the dead process left: the commit marker, part of the batch, and its hold on the lease.
    expect(await base.get(keys.commitMarker())).toBeDefined();
    expect(await base.get(keys.ingestLease())).toBeDefined();

    const waited = await advanceUntilSettled(
      clock,
      events(b.core, event("ADDED", service("ratings", "default", [port]))),
      50,
    ).catch((e: unknown) => e);
    expect(waited).toBeInstanceOf(IngestBusyError);
    expect(await base.get(keys.object("east", "Service", "default", "ratings"))).toBeUndefined();

    await clock.advance(30_000); // the dead holder's lease expires
    const summary = await events(b.core, event("ADDED", service("ratings", "default", [port])));
    expect(summary.applied).toBe(1);
    expect(await base.get(keys.commitMarker())).toBeUndefined();
    expect(await base.get(keys.ingestLease())).toBeUndefined();
    const after = await b.core.sync.instance();
    expect(after).not.toBe(before);
    expect(b.lines.join("\n")).toMatch(/cut off mid-commit before this start.*new state begins/);
    expect((await b.core.sync.state()).synced).toBe(false);
  });

  it("a core starting over a marker nobody's lease covers begins a new lifetime; one covered by a live lease is left alone", async () => {
    for (const [lease, restarts] of [
      [undefined, true],
      [{ owner: "dead", expiresAt: 0 }, true],
      [{ owner: "alive", expiresAt: 60_000 }, false],
    ] as const) {
      const store = createMemoryStore();
      const clock = createManualClock();
      await store.put(keys.commitMarker(), { at: 0, writes: 7 });
      if (lease) await store.put(keys.ingestLease(), lease);
      const c = instance(store, clock, "c", { syncTimeoutMs: 600_000 });
      await c.core.start();
      expect((await store.get(keys.commitMarker())) === undefined, JSON.stringify(lease)).toBe(restarts);
      expect(
        c.lines.some((l) => l.includes("cut off mid-commit")),
        JSON.stringify(lease),
      ).toBe(restarts);
      c.core.stop();
    }
  });
});
