/**
 * The mesh core on a manual clock over the memory store (no sleeps): an ingested batch is pushed
 * by a turn, the change feed names exactly the resources each push changed (listeners and hubs
 * alike), the push log a host attaches has its one format, the observers hear ingest, turns and pushes (one that
 * throws stops none), and the sync gate opens only with the first complete turn begun after sync.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FeedHub } from "../../../lib/core/change-feed.ts";
import type { IngestReport, PushReport, TurnReport } from "../../../lib/core/hooks.ts";
import { createMeshCore, type MeshCoreOptions, type TurnOptions } from "../../../lib/core/mesh-core.ts";
import { createPushLogObserver } from "../../../lib/core/push-log.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents, validateList } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice, event, pod, service } from "../../e2e/support/kube.ts";
import { createManualClock } from "../relay/manual-clock.ts";

const host = "reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };
const slice = (...ips: string[]) =>
  endpointSlice(
    "reviews-1",
    "reviews",
    "default",
    port,
    ips.map((ip) => ({ ip, ready: true })),
  );

/** What a feed listener or hub received: the version (0: the gate opened) and the names, sorted. */
type Heard = { version: number; names: string[] | "all" };
const heard = (version: number, changes?: readonly ResourceChange[]): Heard => ({
  version,
  names: changes ? changes.map((c) => `${c.typeUrl.split(".").pop()}/${c.name}`).sort() : "all",
});

/** A core with a recording listener, hub and observer; `overrides` replace any option. */
function harness(overrides: Partial<MeshCoreOptions> = {}) {
  const clock = createManualClock();
  const store = createMemoryStore();
  const lines: string[] = [];
  let turnsAsked = 0;
  const core = createMeshCore({
    store,
    config: {
      debounce: defaultDebounceOptions,
      registry: defaultRegistryOptions,
      syncTimeoutMs: 60_000,
    },
    timers: clock,
    log: (line) => lines.push(line),
    requestTurn: () => {
      turnsAsked++;
    },
    newId: () => "instance-1",
    ...overrides,
  });
  const listened: Heard[] = [];
  core.feed.subscribe(({ version, changes }) => listened.push(heard(version, changes)));
  const published: Heard[] = [];
  const hub: FeedHub & { openNow: number } = {
    openNow: 2,
    publish: ({ changes }) => published.push(heard(-1, changes)),
    get open() {
      return this.openNow;
    },
  };
  core.feed.attach(hub);
  const reports = { ingest: [] as IngestReport[], turn: [] as TurnReport[], push: [] as PushReport[] };
  core.observe({
    onIngest: (r) => reports.ingest.push(r),
    onTurn: (r) => reports.turn.push(r),
    onPush: (r) => reports.push.push(r),
  });
  const events = async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    return core.ingest.events("east", v.value);
  };
  const resync = async (kind: string, ...items: unknown[]) => {
    const v = await validateList(kind, { kind: `${kind}List`, metadata: { resourceVersion: "1" }, items });
    if (!v.ok) throw new Error(v.error.message);
    return core.ingest.resync("east", v.value);
  };
  /** Moves past the debounce and runs one turn (with `turnOptions`, as the host's driver passes them). */
  const settle = async (turnOptions?: TurnOptions) => {
    await clock.advance(defaultDebounceOptions.debounceAfter);
    return core.turn(turnOptions);
  };
  return {
    core,
    clock,
    lines,
    listened,
    published,
    hub,
    reports,
    events,
    resync,
    settle,
    turnsAsked: () => turnsAsked,
  };
}

let h: ReturnType<typeof harness>;
beforeEach(async () => {
  h = harness();
  await h.core.start();
});

describe("the change feed", () => {
  const cases: {
    name: string;
    change: () => unknown[];
    want: string[];
  }[] = [
    {
      name: "an endpoint change names the one ClusterLoadAssignment",
      change: () => [event("MODIFIED", slice("10.1.0.1", "10.1.0.2"))],
      want: [`ClusterLoadAssignment/outbound|9080||${host}`],
    },
    {
      // With its endpoints: before sync, a service whose endpoints were not heard has no assignment yet.
      name: "a new service names its cluster, endpoints, listener and route",
      change: () => [
        event("ADDED", service("ratings", "default", [port])),
        event("ADDED", pod("ratings", "default", "10.1.0.9")),
        event(
          "ADDED",
          endpointSlice("ratings-1", "ratings", "default", port, [{ ip: "10.1.0.9", ready: true }]),
        ),
      ],
      want: [
        "Cluster/outbound|9080||ratings.default.svc.cluster.local",
        "ClusterLoadAssignment/outbound|9080||ratings.default.svc.cluster.local",
        "Listener/ratings.default.svc.cluster.local:9080",
        "RouteConfiguration/ratings.default.svc.cluster.local:9080",
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await h.events(
        event("ADDED", service("reviews", "default", [port])),
        ...["10.1.0.1", "10.1.0.2"].map((ip) => event("ADDED", pod("reviews", "default", ip))),
        event("ADDED", slice("10.1.0.1")),
      );
      await h.settle();
      h.listened.length = 0;
      h.published.length = 0;

      await h.events(...c.change());
      const turn = await h.settle();
      expect(turn.flushes).toHaveLength(1);
      const version = turn.flushes[0]?.version ?? 0;
      expect(h.listened).toEqual([{ version, names: c.want }]);
      expect(h.published).toEqual([{ version: -1, names: c.want }]);
      // The feed's names are the flush's changes, exactly.
      expect(heard(version, turn.flushes[0]?.changes)).toEqual({ version, names: c.want });
    });
  }

  it("announces nothing for a turn with nothing due, and nothing for a push that changed nothing", async () => {
    await h.settle();
    await h.events(event("ADDED", service("reviews", "default", [port])));
    await h.settle();
    expect(h.listened).toHaveLength(1);
    // The same object again under a newer resourceVersion: applied, but no resource changes.
    await h.events(event("MODIFIED", service("reviews", "default", [port])));
    await h.settle();
    expect(h.listened).toHaveLength(1);
  });
});

describe("a turn's pace", () => {
  it("is awaited by the turn's flush before the first service and after each one", async () => {
    let awaited = 0;
    const paced = harness();
    await paced.core.start();
    await paced.events(
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", slice("10.0.0.1")),
    );
    await paced.settle({
      pace: async () => {
        awaited++;
      },
    });
    // One service flushed: once before it, once after it.
    expect(awaited).toBe(2);
    // The flush it paced published the service: a push was announced.
    expect(paced.listened.filter((l) => l.version > 0)).toHaveLength(1);
    // A turn given no pace does not yield.
    await paced.events(event("MODIFIED", slice("10.0.0.2")));
    await paced.settle();
    expect(awaited).toBe(2);
  });
});

describe("the push log", () => {
  it("has one line per push in the one format, naming the streams when asked", async () => {
    for (const logStreams of [true, false]) {
      const g = harness();
      // The host attaches the push log, and chooses whether its lines name the streams.
      g.core.observe(createPushLogObserver((line) => g.lines.push(line), { streams: logStreams }));
      await g.core.start();
      await g.events(
        event("ADDED", service("reviews", "default", [port])),
        event("ADDED", pod("reviews", "default", "10.1.0.1")),
        event("ADDED", slice("10.1.0.1")),
      );
      await g.settle();
      const pushes = g.lines.filter((l) => l.startsWith("push "));
      // One listener plus the hub's two open streams.
      expect(pushes).toEqual([
        `push 1: full, 4 resource(s) changed, 100ms after the first event${logStreams ? ", 3 stream(s)" : ""}`,
      ]);
    }
  });
});

describe("the observers", () => {
  it("hear every ingest call, turn and push, in order, with what it did", async () => {
    await h.events(event("ADDED", service("reviews", "default", [port])));
    await h.resync("EndpointSlice", slice("10.1.0.1"));
    expect(h.reports.ingest.map((r) => [r.call, r.cluster, r.kind, r.summary.applied])).toEqual([
      ["events", "east", undefined, 1],
      ["resync", "east", "EndpointSlice", 1],
    ]);
    expect(h.turnsAsked()).toBe(2);
    const turn = await h.settle();
    expect(h.reports.turn).toEqual([{ turn, startedAt: 100, endedAt: 100 }]);
    expect(h.reports.push).toEqual([{ flush: turn.flushes[0], latencyMs: 100, streams: 3 }]);
  });

  it("a throwing observer is logged and stops neither the core nor the other observers", async () => {
    const removed = h.core.observe({
      onIngest: () => {
        throw new Error("boom");
      },
    });
    const summary = await h.events(event("ADDED", service("reviews", "default", [port])));
    expect(summary.applied).toBe(1);
    expect(h.reports.ingest).toHaveLength(1);
    expect(h.lines).toContain(`core: an onIngest observer failed: "boom"`);
    removed();
    await h.events(event("ADDED", service("ratings", "default", [port])));
    expect(h.lines.filter((l) => l.includes("observer failed"))).toHaveLength(1);
  });
});

describe("start-up sync", () => {
  it("opens the gate with the first complete turn begun after the registry synced, and wakes every stream", async () => {
    expect(await h.core.sync.synced()).toBe(false);
    await h.events(event("ADDED", service("reviews", "default", [port])));
    // A turn before sync publishes but opens nothing.
    await h.settle();
    expect(await h.core.sync.synced()).toBe(false);
    await h.resync("Service", service("reviews", "default", [port]));
    await h.events(event("ADDED", pod("reviews", "default", "10.1.0.1")));
    const asked = h.turnsAsked();
    await h.resync("EndpointSlice", slice("10.1.0.1"));
    // Becoming synced asks for a turn (and the resync, which queued a push, asked too).
    expect(h.turnsAsked()).toBe(asked + 2);
    expect((await h.core.status()).sync).toMatchObject({ synced: true, published: false });
    h.listened.length = 0;
    h.published.length = 0;

    await h.settle();
    expect(await h.core.sync.synced()).toBe(true);
    // The push, then the gate opening: everything may have changed for every stream.
    expect(h.listened.at(-1)).toEqual({ version: 0, names: "all" });
    expect(h.published.at(-1)).toEqual({ version: -1, names: "all" });
    expect(h.lines).toContain(
      "sync: the synced registry is published; proxies may be told to remove what they hold again",
    );
    const status = await h.core.status();
    expect(status.sync).toMatchObject({ synced: true, published: true, instance: "instance-1" });
    expect(status.published.pushVersion).toBe(2);
  });

  it("a turn that must wait does not open the gate", async () => {
    await h.resync("Pod", pod("reviews", "default", "10.1.0.1"));
    await h.resync("Service", service("reviews", "default", [port]));
    await h.resync("EndpointSlice", slice("10.1.0.1"));
    const turn = await h.core.turn();
    expect(turn.flushes).toHaveLength(0);
    expect(turn.nextAt).toBe(100);
    expect(await h.core.sync.synced()).toBe(false);
    await h.settle();
    expect(await h.core.sync.synced()).toBe(true);
  });
});
