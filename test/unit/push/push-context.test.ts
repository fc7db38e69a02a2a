/**
 * The push context (lib/resources/push-context.ts): the flush builds one per push and returns it
 * (FlushResult.context, which the next flush derives from: FlushDeps.lastContext); derived push by push from the last one it holds what loadPushContext
 * reads whole (the same services, in key order, with the same shards), reading only what the push
 * touched; a chain of derivations nobody asks for is bounded.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { type FlushDeps, type FlushResult, flush } from "../../../lib/push/flush.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import {
  contextFits,
  loadPushContext,
  type PushContext,
  updatePushContext,
} from "../../../lib/resources/push-context.ts";
import type { PushServices } from "../../../lib/resources/push-services.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { generators } from "../xds/checked-generators.ts";

const options = { domainSuffix: "cluster.local" };
const serviceEvent = (name: string, type = "ADDED", namespace = "default") => ({
  type,
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { clusterIP: "10.0.0.1", ports: [{ name: "grpc", port: 9080 }] },
  },
});
const sliceEvent = (name: string, ips: string[], type = "ADDED", namespace = "default") => ({
  type,
  object: {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: `${name}-1`, namespace, labels: { "kubernetes.io/service-name": name } },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "grpc", port: 50051 }],
  },
});

let clock: number;
let store: Store;
/** The context the last flush returned: the next one derives from it, as the core passes it. */
let last: PushContext | undefined;
/** Store keys listed and read since the last reset (what a context read). */
let listed: string[];
let read: string[];

function counting(inner: Store): Store {
  return {
    ...inner,
    get: (key) => {
      read.push(key);
      return inner.get(key);
    },
    getMany: (wanted) => {
      read.push(...wanted);
      return inner.getMany(wanted);
    },
    list: (prefix, o) => {
      listed.push(prefix);
      return inner.list(prefix, o);
    },
    put: (key, value, o) => inner.put(key, value, o),
    delete: (key, o) => inner.delete(key, o),
  };
}

const deps = (o: Partial<FlushDeps> = {}): FlushDeps => ({
  store,
  generators,
  context: { domainSuffix: "cluster.local" },
  now: () => clock,
  ...o,
});

async function ingest(...events: unknown[]) {
  const v = validateEvents(events);
  if (!v.ok) throw new Error(v.error.message);
  clock += 1000;
  await applyEvents({ store, registry: defaultRegistryOptions, now: () => clock }, "c1", v.value);
}

async function push(o: Partial<FlushDeps> = {}): Promise<Extract<FlushResult, { kind: "done" }>> {
  const r = await flush(
    deps({ ...(last && { lastContext: last }), ...o }),
    (await readQueue(store)).map((q) => q.key),
  );
  if (r.kind !== "done") throw new Error("flush busy");
  last = r.context ?? last;
  return r;
}

function contextOf(r: Extract<FlushResult, { kind: "done" }>): PushContext {
  if (!r.context) throw new Error("no context returned");
  return r.context;
}

/** What a context's services hold, comparable (ids in order, records and shards). */
const shape = (s: PushServices) => ({
  ids: [...s.views.keys()],
  views: [...s.views.values()],
  records: Object.fromEntries([...s.records].sort(([a], [b]) => (a < b ? -1 : 1))),
});

beforeEach(() => {
  clock = 1_000_000;
  listed = [];
  read = [];
  store = counting(createMemoryStore());
  last = undefined;
});

describe("the flush's push context", () => {
  it("is returned with the push, at its version; fits only a reader of that version and options", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    const r = await push();
    const ctx = contextOf(r);
    expect(ctx.version).toBe(r.version);
    expect(contextFits(ctx, r.version, options)).toBe(true);
    // Another version, or other options: not this one (the reader loads its own).
    expect(contextFits(ctx, r.version + 1, options)).toBe(false);
    expect(contextFits(ctx, r.version, { domainSuffix: "example.org" })).toBe(false);
    expect(
      contextFits(ctx, r.version, {
        ...options,
        meshEnv: { discoverySelectors: [{ matchLabels: { a: "b" } }] },
      }),
    ).toBe(false);
    expect(Object.isFrozen(ctx)).toBe(true);
  });

  it("a last context of another push version (another core published since) is not derived from", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    const stale = contextOf(await push());
    await stale.services();
    await ingest(serviceEvent("details"));
    await push({ lastContext: undefined });
    await ingest(serviceEvent("ratings"));
    listed = [];
    const r = await push({ lastContext: stale });
    // Read whole (not derived from the stale one, whose services it would carry forward).
    expect(contextOf(r).servicesRead).toBe(false);
    expect(shape(await contextOf(r).services())).toEqual(
      shape(await (await loadPushContext(store, options)).services()),
    );
  });

  it("derived push by push, holds what a whole load reads, reading only the services each push planned", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    const first = contextOf(await push());
    await first.services();
    const steps: [string, unknown[]][] = [
      ["an endpoint moved (EDS-only)", [sliceEvent("reviews", ["10.1.0.2"], "MODIFIED")]],
      [
        "a service added before it in key order",
        [serviceEvent("details"), sliceEvent("details", ["10.2.0.1"])],
      ],
      ["a service in another namespace", [serviceEvent("ratings", "ADDED", "other")]],
      ["a service removed", [serviceEvent("reviews", "DELETED")]],
    ];
    for (const [what, events] of steps) {
      await ingest(...events);
      const ctx = contextOf(await push());
      listed = [];
      read = [];
      const derived = shape(await ctx.services());
      // Taken from what the flush planned: no service listed or read again.
      expect({ what, listed, read }).toEqual({ what, listed: [], read: [] });
      const loaded = await loadPushContext(store, options);
      expect(loaded.version).toBe(ctx.version);
      expect({ what, ...derived }).toEqual({ what, ...shape(await loaded.services()) });
    }
  });

  it("an EDS-only push keeps the last context's configs, reading none; a Full push reads them again", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    const first = contextOf(await push());
    const configs = [
      keys.configPrefix("VirtualService"),
      keys.configPrefix("DestinationRule"),
      keys.configPrefix("Sidecar"),
    ];
    await ingest(sliceEvent("reviews", ["10.1.0.2"], "MODIFIED"));
    listed = [];
    const eds = contextOf(await push());
    expect(listed.filter((p) => configs.includes(p))).toEqual([]);
    expect([eds.routing, eds.sidecars, eds.visibility]).toEqual([
      first.routing,
      first.sidecars,
      first.visibility,
    ]);
    expect(eds.visibility).toBe(first.visibility);
    await ingest(serviceEvent("details"));
    listed = [];
    const full = contextOf(await push());
    expect(listed.filter((p) => configs.includes(p)).sort()).toEqual([...configs].sort());
    expect(full.visibility).not.toBe(first.visibility);
  });

  it("unasked, a context is read whole on first ask; its update re-reads only the shards named", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]), serviceEvent("details"));
    const r = await push();
    expect(contextOf(r).servicesRead).toBe(false);
    const prev = await loadPushContext(store, options);
    await prev.services();
    await ingest(sliceEvent("reviews", ["10.1.0.9"], "MODIFIED"));
    listed = [];
    read = [];
    const next = updatePushContext(prev, store, {
      version: prev.version + 1,
      full: false,
      shards: new Set(["default/reviews.default.svc.cluster.local"]),
    });
    expect(next.routing).toBe(prev.routing);
    expect(next.table).toBe(prev.table);
    const got = shape(await next.services());
    expect(listed).toEqual([]);
    expect(read).toEqual([keys.shards("default", "reviews.default.svc.cluster.local")]);
    expect(got).toEqual(shape(await (await loadPushContext(store, options)).services()));
    // The context it came from is unchanged.
    const before = (await prev.services()).views.get("default/reviews.default.svc.cluster.local");
    expect(JSON.stringify(before?.shards)).toContain("10.1.0.1");
  });

  it("takes at most one chunk of planned services: a push planning more is read whole on first ask", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    await contextOf(await push()).services();
    await ingest(serviceEvent("details"), serviceEvent("ratings"));
    const ctx = contextOf(await push({ chunkServices: 1 }));
    expect(ctx.servicesRead).toBe(false);
    expect(shape(await ctx.services())).toEqual(
      shape(await (await loadPushContext(store, options)).services()),
    );
  });

  it("keeps at most 32 unasked derivations: the next is read whole", async () => {
    await ingest(serviceEvent("reviews"), sliceEvent("reviews", ["10.1.0.1"]));
    let ctx = contextOf(await push());
    await ctx.services();
    for (let i = 1; i <= 33; i++) {
      await ingest(sliceEvent("reviews", [`10.1.0.${i + 1}`], "MODIFIED"));
      ctx = contextOf(await push());
      expect({ i, derived: ctx.servicesRead }).toEqual({ i, derived: i <= 32 });
    }
    expect(shape(await ctx.services())).toEqual(
      shape(await (await loadPushContext(store, options)).services()),
    );
  });
});
