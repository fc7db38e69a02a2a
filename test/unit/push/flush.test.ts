import { beforeEach, describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import { type FlushDeps, flush, maxLoggedNames, type PushLogEntry } from "../../../lib/push/flush.ts";
import type { GeneratedRecord } from "../../../lib/push/plan.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import { runDebounceTurn } from "../../../lib/push/run.ts";
import type { PushVersion } from "../../../lib/resources/changes.ts";
import type { Generator, StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { generators } from "../xds/checked-generators.ts";

const host = "reviews.default.svc.cluster.local";
const cla = `outbound|9080||${host}`;
const lis = `${host}:9080`;

const serviceEvent = (type = "ADDED") => ({
  type,
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: "default" },
    spec: { clusterIP: "10.0.0.1", ports: [{ name: "grpc", port: 9080 }] },
  },
});
const sliceEvent = (ips: string[], type = "ADDED") => ({
  type,
  object: {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "reviews-1",
      namespace: "default",
      labels: { "kubernetes.io/service-name": "reviews" },
    },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "grpc", port: 50051 }],
  },
});

let clock: number;
let store: Store;
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
  await applyEvents({ store, registry: defaultRegistryOptions, now: () => clock }, "c1", v.value);
}
async function flushQueue(d = deps()) {
  return flush(
    d,
    (await readQueue(d.store)).map((q) => q.key),
  );
}
async function published(s = store): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await listAll<StoredResource>(s, "xds/"))
    out[`${e.value.typeUrl.split(".").pop()}/${e.value.name}`] = e.value.version;
  return out;
}
const pushVersion = async () => (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;

beforeEach(() => {
  clock = 1_000_000;
  store = createMemoryStore();
});

describe("flush", () => {
  it("publishes a new service in full, bumps the version, logs the push, empties the queue", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    const r = await flushQueue();
    expect(r.kind).toBe("done");
    if (r.kind !== "done") return;
    expect(r.version).toBe(1);
    expect(r.request?.full).toBe(true);
    expect(r.changes.map((c) => `${c.typeUrl.split(".").pop()}/${c.name}`)).toEqual([
      `Cluster/${cla}`,
      `ClusterLoadAssignment/${cla}`,
      `Listener/${lis}`,
      `RouteConfiguration/${lis}`,
    ]);
    expect(await readQueue(store)).toEqual([]);
    const log = await store.get<PushLogEntry>(keys.pushLog(1));
    expect(log?.value.changes).toHaveLength(4);
    expect(await store.get(keys.flushing())).toBeUndefined();
  });

  it("pushing the same thing twice publishes nothing: the Full push is announced as a refresh alone", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    const before = await published();
    const record = await store.get(keys.generated("default", host));
    await ingest(serviceEvent("MODIFIED"));
    expect(await readQueue(store)).toHaveLength(0); // unchanged object: nothing queued
    // Force the same request through again.
    await ingest(serviceEvent("DELETED"), serviceEvent("ADDED"), sliceEvent(["10.1.0.1"], "MODIFIED"));
    const r = await flushQueue();
    // Sidecar resources are built apart from the published set: the Full push is announced for them.
    expect(r).toMatchObject({ kind: "done", version: 2, changes: [] });
    expect(r.kind === "done" && r.refresh).toBe(true);
    expect(await published()).toEqual(before);
    expect(await pushVersion()).toBe(2);
    // Nothing changed, so the generated record is not even written again.
    expect(await store.get(keys.generated("default", host))).toEqual(record);
  });

  it("an endpoint change regenerates only the ClusterLoadAssignment", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    const before = await published();
    await ingest(sliceEvent(["10.1.0.2"], "MODIFIED"));
    const [queued] = await readQueue(store);
    expect(queued?.request).toMatchObject({ full: false, configsUpdated: [`ServiceEntry/default/${host}`] });
    const r = await flushQueue();
    expect(r.kind === "done" && r.changes).toEqual([
      {
        typeUrl: TypeUrl.endpoint,
        name: cla,
        version: expect.any(String),
        body: expect.any(Uint8Array),
        service: `default/${host}`,
      },
    ]);
    // The change carries the published bytes; the push log names and versions only.
    const change = r.kind === "done" ? r.changes[0] : undefined;
    const stored = await store.get<StoredResource>(keys.resource(TypeUrl.endpoint, cla));
    expect(change?.body).toEqual(stored?.value.body);
    expect(change?.version).toBe(stored?.value.version);
    const log = await store.get<PushLogEntry>(keys.pushLog(r.kind === "done" ? r.version : 0));
    expect(log?.value.changes).toEqual([{ typeUrl: TypeUrl.endpoint, name: cla, version: change?.version }]);
    const after = await published();
    expect(after[`ClusterLoadAssignment/${cla}`]).not.toBe(before[`ClusterLoadAssignment/${cla}`]);
    expect({ ...after, [`ClusterLoadAssignment/${cla}`]: "" }).toEqual({
      ...before,
      [`ClusterLoadAssignment/${cla}`]: "",
    });
  });

  it("a deleted service loses every resource it generated", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    await ingest(serviceEvent("DELETED"));
    const r = await flushQueue();
    expect(r.kind === "done" && r.changes.map((c) => c.version)).toEqual([null, null, null, null]);
    expect(await published()).toEqual({});
    expect(await store.get(keys.generated("default", host))).toBeUndefined();
  });

  it("a crash mid-flush loses nothing: the next flush takes over and finishes the push", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    let puts = 0;
    const crashing: Store = {
      ...store,
      put: (key, value, options) => {
        if (key.startsWith("xds/") && ++puts === 3) throw new Error("power cut");
        return store.put(key, value, options);
      },
    };
    await expect(flushQueue(deps({ store: crashing }))).rejects.toThrow("power cut");
    // The lease is released in finally; simulate a hard crash by restoring it.
    await store.put(keys.flushing(), { owner: "dead", at: clock });
    expect(await readQueue(store)).toHaveLength(1);
    expect(await flushQueue()).toEqual({ kind: "busy" });
    clock += 30_000;
    const r = await flushQueue();
    expect(r).toMatchObject({ kind: "done", version: 1, recovered: true });
    expect(Object.keys(await published())).toHaveLength(4);
    expect(await readQueue(store)).toEqual([]);
    // And the result equals a flush that never crashed.
    const clean = createMemoryStore();
    const saved = store;
    store = clean;
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    store = saved;
    expect(await published()).toEqual(await published(clean));
  });

  it("refuses to publish an inconsistent set and leaves the queue in place", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    const noEds: Generator[] = generators.map((g) =>
      g.typeUrl === TypeUrl.endpoint ? { typeUrl: g.typeUrl, generate: () => [] } : g,
    );
    await expect(flushQueue(deps({ generators: noEds }))).rejects.toThrow(
      /Cluster outbound\|9080\|\|.* has no ClusterLoadAssignment/,
    );
    expect(await published()).toEqual({});
    expect(await readQueue(store)).toHaveLength(1);
    expect(await store.get(keys.flushing())).toBeUndefined();
  });

  it("a flush that fails after publishing leaves its lease expired: the next one takes over as recovered", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    // The push log write fails (as a too-large row once did on the Durable Object's SQLite).
    const failing: Store = {
      ...store,
      put: (key, value, options) =>
        key.startsWith("pushlog/")
          ? Promise.reject(new Error("row too big"))
          : store.put(key, value, options),
    };
    await expect(flushQueue(deps({ store: failing }))).rejects.toThrow("row too big");
    expect(Object.keys(await published())).toHaveLength(4);
    expect(await readQueue(store)).toHaveLength(1);
    const before = await pushVersion();
    // Nothing is left to change, yet the retry announces a push of unknown scope.
    const r = await flushQueue();
    // Nothing is published; the Full push is still a refresh.
    expect(r).toMatchObject({ kind: "done", recovered: true, changes: [] });
    expect(r.kind === "done" && r.refresh).toBe(true);
    expect(await pushVersion()).toBeGreaterThan(before);
    expect(await store.get(keys.flushing())).toBeUndefined();
  });

  it("a push log entry lists at most maxLoggedNames changes and configs, and counts them all", async () => {
    await ingest(...services(260));
    const r = await flushQueue();
    const seq = r.kind === "done" ? r.version : 0;
    const entry = (await store.get<PushLogEntry>(keys.pushLog(seq)))?.value;
    expect(r.kind === "done" && r.changes.length).toBeGreaterThan(maxLoggedNames);
    expect(entry?.changes).toHaveLength(maxLoggedNames);
    expect(entry?.changeCount).toBe(r.kind === "done" ? r.changes.length : -1);
  });

  /** `n` Services named svc-0..svc-(n-1), each with no endpoints. */
  const services = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const s = serviceEvent() as { object: { metadata: { name: string } } };
      return { ...s, object: { ...s.object, metadata: { ...s.object.metadata, name: `svc-${i}` } } };
    });

  it("plans and publishes in chunks: every service of a big flush is published, as in one piece", async () => {
    await ingest(...services(10));
    const chunked = await flushQueue(deps({ chunkServices: 3 }));
    const inChunks = await published();
    // The same mesh flushed in one piece publishes the same names and versions.
    const whole = createMemoryStore();
    await applyEvents(
      { store: whole, registry: defaultRegistryOptions, now: () => clock },
      "c1",
      (validateEvents(services(10)) as { ok: true; value: never }).value,
    );
    await flush(
      deps({ store: whole }),
      (await readQueue(whole)).map((q) => q.key),
    );
    expect(Object.keys(inChunks)).toHaveLength(40);
    expect(inChunks).toEqual(await published(whole));
    expect(chunked.kind === "done" && chunked.changes).toHaveLength(40);
  });

  it("paces before the first service and after each one: only whole chunks are published when it yields, the push announced after the last", async () => {
    await ingest(...services(5));
    const before = await pushVersion();
    const atEachYield: { resources: number; version: number }[] = [];
    const pace = async () => {
      atEachYield.push({ resources: Object.keys(await published()).length, version: await pushVersion() });
    };
    const r = await flushQueue(deps({ chunkServices: 2, pace }));
    // 5 services in chunks of 2 (4 resources a service): a chunk is published after its last
    // service is planned, so a yield sees 0, 8 or 16 resources, never a chunk in part.
    expect(atEachYield.map((y) => y.resources)).toEqual([0, 0, 0, 8, 8, 16]);
    expect(atEachYield.every((y) => y.version === before)).toBe(true);
    expect(Object.keys(await published())).toHaveLength(20);
    expect(r.kind === "done" && r.version).toBe(before + 1);
  });

  it("a chunk that is inconsistent stops the flush: earlier chunks stay published, the next flush recovers", async () => {
    await ingest(...services(4));
    // svc-3's ClusterLoadAssignment is never generated: its chunk (the second of two) is refused.
    const noEdsForLast: Generator[] = generators.map((g) =>
      g.typeUrl === TypeUrl.endpoint
        ? {
            typeUrl: g.typeUrl,
            generate: (view, ctx) => (view.hostname.startsWith("svc-3.") ? [] : g.generate(view, ctx)),
          }
        : g,
    );
    await expect(flushQueue(deps({ generators: noEdsForLast, chunkServices: 2 }))).rejects.toThrow(
      /the 2 service\(s\) before them were published: .*svc-3/,
    );
    expect(Object.keys(await published())).toHaveLength(8);
    const r = await flushQueue();
    expect(r).toMatchObject({ kind: "done", recovered: true });
    expect(Object.keys(await published())).toHaveLength(16);
  });

  it("a push's changes carry bytes up to maxFeedBodyBytes; past it, versions only", async () => {
    await ingest(...services(3));
    const r = await flushQueue(deps({ maxFeedBodyBytes: 250 }));
    const changes = r.kind === "done" ? r.changes : [];
    const carried = changes.filter((c) => c.body !== undefined);
    expect(carried.length).toBeGreaterThan(0);
    expect(carried.length).toBeLessThan(changes.length);
    expect(carried.reduce((n, c) => n + (c.body?.byteLength ?? 0), 0)).toBeLessThanOrEqual(250);
    for (const c of changes.filter((c) => c.body === undefined)) {
      expect(c.version).toBe(
        (await store.get<StoredResource>(keys.resource(c.typeUrl, c.name)))?.value.version,
      );
    }
  });

  it("stores what a service generated as name and version lists per type URL", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    const record = (await store.get<GeneratedRecord>(keys.generated("default", host)))?.value;
    const versions = await published();
    expect(record?.[TypeUrl.endpoint]).toEqual({
      names: [cla],
      versions: [versions[`ClusterLoadAssignment/${cla}`]],
    });
    expect(Object.keys(record ?? {}).sort()).toEqual(
      [TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route].sort(),
    );
  });

  it("reads a generated record in the older name ─▶ version layout: unchanged resources stay, vanished ones go", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    const versions = await published();
    // As a flush before the list layout wrote it, plus a Listener the service no longer generates.
    const typeUrls: Record<string, string> = {
      Cluster: TypeUrl.cluster,
      ClusterLoadAssignment: TypeUrl.endpoint,
      Listener: TypeUrl.listener,
      RouteConfiguration: TypeUrl.route,
    };
    const old: Record<string, Record<string, string>> = {};
    for (const [key, version] of Object.entries(versions)) {
      const typeUrl = typeUrls[key.slice(0, key.indexOf("/"))] as string;
      old[typeUrl] = { ...old[typeUrl], [key.slice(key.indexOf("/") + 1)]: version };
    }
    (old[TypeUrl.listener] as Record<string, string>)["gone:80"] = "0123456789abcdef";
    await store.put(keys.generated("default", host), old);
    await store.put(keys.pending(clock, "x"), {
      request: { full: true, configsUpdated: null, reasons: { global: 1 }, start: clock },
      at: clock,
    });
    const r = await flushQueue();
    expect(r.kind === "done" && r.changes).toEqual([
      { typeUrl: TypeUrl.listener, name: "gone:80", version: null },
    ]);
    const record = (await store.get<GeneratedRecord>(keys.generated("default", host)))?.value;
    expect(record?.[TypeUrl.listener]).toEqual({ names: [lis], versions: [versions[`Listener/${lis}`]] });
  });

  it("a push of unknown scope regenerates everything and removes what vanished", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    await flushQueue();
    // The service record disappears without a push of its own (e.g. a resync repaired it).
    await store.delete(keys.service("default", host, "c1"));
    await store.put(keys.pending(clock, "x"), {
      request: { full: true, configsUpdated: null, reasons: { global: 1 }, start: clock },
      at: clock,
    });
    const r = await flushQueue();
    expect(r.kind === "done" && r.changes.filter((c) => c.version === null)).toHaveLength(4);
  });
});

describe("runDebounceTurn", () => {
  it("waits, then pushes, with the clock passed in", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    const first = await runDebounceTurn(deps(), defaultDebounceOptions);
    // What it left queued arrived now (the turn's own start: not "after" it).
    expect(first).toEqual({ flushes: [], nextAt: clock + 100, queuedSince: clock });
    clock += 100;
    const second = await runDebounceTurn(deps(), defaultDebounceOptions);
    expect(second.flushes).toHaveLength(1);
    expect(second.nextAt).toBeNull();
    expect(second.queuedSince).toBeNull();
  });

  it("with EDS debounce off pushes endpoint changes at once and keeps full ones waiting", async () => {
    await ingest(serviceEvent(), sliceEvent(["10.1.0.1"]));
    clock += 100;
    await runDebounceTurn(deps(), defaultDebounceOptions);
    await ingest(sliceEvent(["10.1.0.2"], "MODIFIED"));
    await ingest({
      ...serviceEvent("MODIFIED"),
      object: {
        ...serviceEvent().object,
        metadata: { name: "reviews", namespace: "default", labels: { v: "2" } },
      },
    });
    const turn = await runDebounceTurn(deps(), { ...defaultDebounceOptions, enableEdsDebounce: false });
    expect(turn.flushes.map((f) => f.request?.full)).toEqual([false]);
    expect(turn.nextAt).toBe(clock + 100);
  });
});
