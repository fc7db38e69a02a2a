/**
 * The store follower on a manual clock over the memory store (no sleeps): it announces the pushes
 * the store published past its feed's version, in order, with what their push log entries name
 * (or `undefined` when an entry is gone, truncated or recovered), never twice, every intervalMs
 * from start() to stop(), and asks for a turn when pushes are queued.
 */
import { describe, expect, it } from "vitest";
import { createChangeFeed } from "../../../lib/core/change-feed.ts";
import { announceUpTo, createStoreFollower, maxCatchUp } from "../../../lib/core/store-follower.ts";
import type { PushLogEntry } from "../../../lib/push/flush.ts";
import { legacyRefreshType } from "../../../lib/push/push-refresh.ts";
import { enqueuePush } from "../../../lib/push/queue.ts";
import type { Push, PushVersion, ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { publishedBy } from "../../../lib/xds/change-source.ts";
import { createManualClock } from "../relay/manual-clock.ts";

/** A change naming one ClusterLoadAssignment at `version`. */
const eds = (name: string, version: string | null = "v1"): ResourceChange => ({
  typeUrl: TypeUrl.endpoint,
  name,
  version,
});

/** A push log entry with overrides. */
function entry(seq: number, overrides: Partial<PushLogEntry> = {}): PushLogEntry {
  const changes = overrides.changes ?? [eds(`outbound|80||s${seq}.default.svc.cluster.local`)];
  return {
    seq,
    at: seq,
    request: { full: false, configsUpdated: [], reasons: { endpoint: 1 }, start: seq },
    changes,
    changeCount: changes.length,
    ...overrides,
  } as PushLogEntry;
}

/** Publishes pushes as a flush would: each log entry, then the counter at the last one. */
async function publish(store: Store, ...entries: PushLogEntry[]): Promise<void> {
  for (const e of entries) await store.put(keys.pushLog(e.seq), e);
  const last = entries[entries.length - 1];
  if (last) await store.put<PushVersion>(keys.pushVersion(), { version: last.seq, at: last.at });
}

/** A follower over a fresh store with a recording feed. */
function harness(options: { from?: number } = {}) {
  const store = createMemoryStore();
  const clock = createManualClock();
  const feed = createChangeFeed((err) => {
    throw err;
  });
  feed.skipTo(options.from ?? 0);
  const heard: { version: number; names: string[] | "all" }[] = [];
  feed.subscribe(({ version, changes }) =>
    heard.push({ version, names: changes ? changes.map((c) => c.name) : "all" }),
  );
  let turnsAsked = 0;
  const lines: string[] = [];
  const follower = createStoreFollower({
    core: { store, feed },
    intervalMs: 1000,
    timers: clock,
    log: (line) => lines.push(line),
    requestTurn: () => {
      turnsAsked++;
    },
  });
  return { store, clock, feed, heard, follower, lines, turnsAsked: () => turnsAsked };
}

describe("check", () => {
  const cases: {
    name: string;
    from?: number;
    entries: PushLogEntry[];
    /** Log entries deleted after publishing (trimmed by keepLog). */
    gone?: number[];
    want: { version: number; names: string[] | "all" }[];
  }[] = [
    {
      name: "announces each push since the feed's version, in order, with the names its log entry lists",
      from: 1,
      entries: [entry(1), entry(2), entry(3)],
      want: [
        { version: 2, names: ["outbound|80||s2.default.svc.cluster.local"] },
        { version: 3, names: ["outbound|80||s3.default.svc.cluster.local"] },
      ],
    },
    {
      name: "nothing past the feed's version: announces nothing",
      from: 3,
      entries: [entry(1), entry(2), entry(3)],
      want: [],
    },
    {
      name: "a truncated entry (more changes than it lists) asks for a re-read of everything",
      entries: [entry(1, { changeCount: 5000 })],
      want: [{ version: 1, names: "all" }],
    },
    {
      name: "an entry gone from the log asks for a re-read of everything, the next one is named",
      entries: [entry(1), entry(2)],
      gone: [1],
      want: [
        { version: 1, names: "all" },
        { version: 2, names: ["outbound|80||s2.default.svc.cluster.local"] },
      ],
    },
    {
      name: "a recovered flush's entry asks for a re-read (the crashed flush published unannounced changes)",
      entries: [entry(1, { recovered: true })],
      want: [{ version: 1, names: "all" }],
    },
    {
      name: "a removal is announced as one (version null)",
      entries: [entry(1, { changes: [eds("gone", null)] })],
      want: [{ version: 1, names: ["gone"] }],
    },
    {
      name: `more than ${maxCatchUp} pushes behind: the newest once, everything re-read`,
      entries: Array.from({ length: maxCatchUp + 1 }, (_, i) => entry(i + 1)),
      want: [{ version: maxCatchUp + 1, names: "all" }],
    },
  ];
  it.each(cases)("$name", async (c) => {
    const h = harness(c.from === undefined ? {} : { from: c.from });
    await publish(h.store, ...c.entries);
    for (const seq of c.gone ?? []) await h.store.delete(keys.pushLog(seq));
    await h.follower.check();
    expect(h.heard).toEqual(c.want);
    const last = c.entries[c.entries.length - 1]?.seq ?? 0;
    expect(h.feed.version).toBe(Math.max(last, c.from ?? 0));
  });

  it("never announces a push twice: a second check, or the core announcing it too, adds nothing", async () => {
    const h = harness();
    await publish(h.store, entry(1), entry(2));
    await Promise.all([h.follower.check(), h.follower.check()]);
    await h.follower.check();
    // What the core that ran flush 2 announces afterwards is dropped by the feed.
    h.feed.emit({ version: 2, changes: [eds("again")] });
    expect(h.heard.map((x) => x.version)).toEqual([1, 2]);
  });

  it("a push the core announced first is skipped, the ones after it are announced", async () => {
    const h = harness();
    await publish(h.store, entry(1), entry(2), entry(3));
    h.feed.emit({ version: 1, changes: [eds("mine")] });
    await h.follower.check();
    expect(h.heard.map((x) => `${x.version}:${x.names}`)).toEqual([
      "1:mine",
      "2:outbound|80||s2.default.svc.cluster.local",
      "3:outbound|80||s3.default.svc.cluster.local",
    ]);
  });

  it("announceUpTo racing a check: both finish, each push announced once, in order", async () => {
    const h = harness();
    await publish(h.store, entry(1), entry(2), entry(3));
    await Promise.all([
      announceUpTo(h.store, h.feed, 2),
      h.follower.check(),
      announceUpTo(h.store, h.feed, 3),
    ]);
    expect(h.heard.map((x) => x.version)).toEqual([1, 2, 3]);
  });

  it("reads the published bodies once for every stream: upserts carry the stored resource, a view's overlay and a removal do not", async () => {
    const h = harness();
    const stored: StoredResource = {
      typeUrl: TypeUrl.endpoint,
      name: "a",
      version: "v2",
      body: new Uint8Array([1, 2, 3]),
      service: "default/a.default.svc.cluster.local",
    };
    await h.store.put(keys.resource(stored.typeUrl, stored.name), stored);
    const overlay: ResourceChange = { ...eds("a", "v9"), view: "default" };
    await publish(
      h.store,
      entry(1, { changes: [eds("a", "v1"), eds("gone", null), overlay, eds("missing")] }),
    );
    const got: (readonly ResourceChange[] | undefined)[] = [];
    h.feed.subscribe(({ changes }) => got.push(changes));
    await h.follower.check();
    const [a, gone, view, missing] = got[0] ?? [];
    // The resource the store holds now (a later push changed it again: announced next, no-op then).
    expect(publishedBy(a as ResourceChange)).toEqual(stored);
    expect(gone).toEqual(eds("gone", null));
    expect(view).toEqual(overlay);
    expect(missing && publishedBy(missing)).toBeUndefined();
  });

  it.each([
    ["a refresh push that published nothing else, as logged", { changes: [], changeCount: 0, refresh: true }],
    [
      "a refresh in the older layout (one change of the legacy type), that change left out",
      {
        changes: [{ typeUrl: legacyRefreshType, name: "configs", version: "configs" }],
        changeCount: 1,
      },
    ],
  ])("announces %s, reading no resource for it", async (_what, logged) => {
    const h = harness();
    let reads = 0;
    const getMany = h.store.getMany.bind(h.store);
    h.store.getMany = ((wanted: readonly string[]) => {
      reads += wanted.filter((k) => k.startsWith("xds/")).length;
      return getMany(wanted);
    }) as typeof h.store.getMany;
    await publish(h.store, entry(1, logged as Partial<PushLogEntry>));
    const got: Push[] = [];
    h.feed.subscribe((push) => got.push(push));
    await h.follower.check();
    expect(got).toEqual([{ version: 1, changes: [], refresh: true }]);
    expect(reads).toBe(0);
  });

  it("a refresh push with assignments keeps saying it once their bodies are read", async () => {
    const h = harness();
    const name = "outbound|80||a.ns.svc.cluster.local";
    await h.store.put(keys.resource(TypeUrl.endpoint, name), {
      typeUrl: TypeUrl.endpoint,
      name,
      version: "v1",
      body: new Uint8Array([1]),
      service: "ns/a.ns.svc.cluster.local",
    });
    await publish(
      h.store,
      entry(1, {
        changes: [{ typeUrl: TypeUrl.endpoint, name, version: "v1" }],
        changeCount: 1,
        refresh: true,
      }),
    );
    const got: Push[] = [];
    h.feed.subscribe((push) => got.push(push));
    await h.follower.check();
    expect(got[0]?.changes?.[0]?.body).toEqual(new Uint8Array([1]));
    expect(got[0]?.refresh).toBe(true);
  });

  it("asks for a turn when pushes are queued, and only then", async () => {
    const h = harness();
    await h.follower.check();
    expect(h.turnsAsked()).toBe(0);
    await enqueuePush(h.store, { full: true, configsUpdated: null, reasons: {}, start: 0 }, 0);
    await h.follower.check();
    expect(h.turnsAsked()).toBe(1);
  });
});

describe("start and stop", () => {
  it("checks every intervalMs after start() until stop()", async () => {
    const h = harness();
    h.follower.start();
    await publish(h.store, entry(1));
    await h.clock.advance(999);
    expect(h.heard).toEqual([]);
    await h.clock.advance(1);
    expect(h.heard.map((x) => x.version)).toEqual([1]);
    await publish(h.store, entry(2));
    await h.clock.advance(1000);
    expect(h.heard.map((x) => x.version)).toEqual([1, 2]);
    h.follower.stop();
    await publish(h.store, entry(3));
    await h.clock.advance(5000);
    expect(h.heard.map((x) => x.version)).toEqual([1, 2]);
    expect(h.clock.pending()).toBe(0);
  });

  it("a check that fails is logged and the next one still runs", async () => {
    const h = harness();
    let fail = true;
    const get = h.store.get.bind(h.store);
    h.store.get = ((key: string) => {
      if (fail && key === keys.pushVersion()) return Promise.reject(new Error("store down"));
      return get(key);
    }) as Store["get"];
    h.follower.start();
    await publish(h.store, entry(1));
    await h.clock.advance(1000);
    expect(h.heard).toEqual([]);
    expect(h.lines.join("\n")).toContain("store down");
    fail = false;
    await h.clock.advance(1000);
    expect(h.heard.map((x) => x.version)).toEqual([1]);
    h.follower.stop();
  });

  it("refuses an interval that is not a positive number", () => {
    const h = harness();
    expect(() => createStoreFollower({ core: h, intervalMs: 0, timers: h.clock, log: () => {} })).toThrow(
      /interval 0 ms/,
    );
  });
});
