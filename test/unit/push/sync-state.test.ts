/** The start-up sync decision (Istio #24117), pure: a record, `now` and the options in; the state out. */
import { describe, expect, it } from "vitest";
import {
  type ClusterSync,
  decideSync,
  newSyncRecord,
  noteIngest,
  notePublished,
  type SyncOptions,
  type SyncRecord,
  syncTransitions,
} from "../../../lib/push/sync-state.ts";

const slices: SyncOptions = { timeoutMs: 60_000, useEndpointSlice: true };
const endpointsKind: SyncOptions = { timeoutMs: 60_000, useEndpointSlice: false };
const T0 = 1_000_000;

const cluster = (o: Partial<ClusterSync> = {}): ClusterSync => ({
  services: false,
  endpointSlices: false,
  endpoints: false,
  pods: false,
  ...o,
});
const record = (o: Partial<SyncRecord> = {}): SyncRecord => ({ ...newSyncRecord("id-1", T0), ...o });
const full = cluster({ services: true, endpointSlices: true });

describe("decideSync", () => {
  const cases: {
    name: string;
    record: SyncRecord;
    at?: number;
    options?: SyncOptions;
    synced: boolean;
    timedOut?: boolean;
  }[] = [
    { name: "a fresh record heard from nobody", record: record(), synced: false },
    {
      name: "heard from a cluster that sent nothing else",
      record: record({ clusters: { a: cluster() } }),
      synced: false,
    },
    {
      name: "Services only",
      record: record({ clusters: { a: cluster({ services: true }) } }),
      synced: false,
    },
    {
      name: "EndpointSlices only",
      record: record({ clusters: { a: cluster({ endpointSlices: true }) } }),
      synced: false,
    },
    { name: "Services and EndpointSlices", record: record({ clusters: { a: full } }), synced: true },
    {
      name: "Services and EndpointSlices, but Endpoints is the endpoint kind",
      record: record({ clusters: { a: full } }),
      options: endpointsKind,
      synced: false,
    },
    {
      name: "Services and Endpoints with PILOT_USE_ENDPOINT_SLICE=false",
      record: record({ clusters: { a: cluster({ services: true, endpoints: true }) } }),
      options: endpointsKind,
      synced: true,
    },
    {
      name: "one cluster synced, another heard from and not",
      record: record({ clusters: { a: full, b: cluster({ services: true }) } }),
      synced: false,
    },
    { name: "two clusters synced", record: record({ clusters: { a: full, b: full } }), synced: true },
    {
      name: "synced once, then a new cluster heard from: stays synced",
      record: record({ clusters: { a: full, b: cluster() }, syncedAt: T0 + 5 }),
      synced: true,
    },
    { name: "just before the timeout", record: record(), at: T0 + 59_999, synced: false, timedOut: false },
    { name: "at the timeout", record: record(), at: T0 + 60_000, synced: true, timedOut: true },
    {
      name: "timeout 0: synced from the start",
      record: record(),
      options: { ...slices, timeoutMs: 0 },
      synced: true,
      timedOut: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = decideSync(c.record, c.at ?? T0 + 1000, c.options ?? slices);
      expect(s.synced).toBe(c.synced);
      if (c.timedOut !== undefined) expect(s.timedOut).toBe(c.timedOut);
      expect(s.instance).toBe("id-1");
    });
  }

  it("lists clusters sorted, with the endpoint kind in use", () => {
    const s = decideSync(record({ clusters: { z: full, a: cluster({ services: true }) } }), T0, slices);
    expect(s.clusters).toEqual([
      { cluster: "a", services: true, endpoints: false, synced: false, pods: false },
      { cluster: "z", services: true, endpoints: true, synced: true, pods: false },
    ]);
    expect(s.timeoutAt).toBe(T0 + 60_000);
  });

  it("shows whether a cluster's Pod resync arrived, reading a record stored without it as not", () => {
    const old = { services: true, endpointSlices: true, endpoints: false }; // stored before `pods` existed
    const s = decideSync(record({ clusters: { a: old, b: cluster({ ...full, pods: true }) } }), T0, slices);
    expect(s.clusters.map((c) => [c.cluster, c.synced, c.pods])).toEqual([
      ["a", true, false],
      ["b", true, true],
    ]);
    expect(s.synced).toBe(true); // Pods are not part of synced
  });
});

describe("noteIngest", () => {
  it("records a cluster heard from, then each resync, and nothing for a repeat", () => {
    const r0 = record();
    const r1 = noteIngest(r0, T0 + 1, slices, "a");
    expect(r1?.clusters).toEqual({ a: cluster() });
    expect(noteIngest(r1 as SyncRecord, T0 + 2, slices, "a")).toBeUndefined();
    const r2 = noteIngest(r1 as SyncRecord, T0 + 3, slices, "a", "Service") as SyncRecord;
    expect(r2.clusters.a).toEqual(cluster({ services: true }));
    expect(r2.syncedAt).toBeUndefined();
    const withPods = noteIngest(r2, T0 + 4, slices, "a", "Pod") as SyncRecord;
    expect(withPods.clusters.a).toEqual(cluster({ services: true, pods: true }));
    expect(withPods.syncedAt).toBeUndefined();
    expect(noteIngest(withPods, T0 + 4, slices, "a", "Pod")).toBeUndefined();
    const r3 = noteIngest(r2, T0 + 5, slices, "a", "EndpointSlice") as SyncRecord;
    expect(r3.syncedAt).toBe(T0 + 5);
    expect(r0.clusters).toEqual({}); // the input is never changed
  });

  it("keeps the first syncedAt when a new cluster comes later", () => {
    const synced = record({ clusters: { a: full }, syncedAt: T0 });
    const next = noteIngest(synced, T0 + 9, slices, "b") as SyncRecord;
    expect(next.syncedAt).toBe(T0);
    expect(decideSync(next, T0 + 9, slices).synced).toBe(true);
  });

  it("waits for every kind the relay watches: a WorkloadEntry list before the cluster is synced", () => {
    const watching = ["Service", "EndpointSlice", "ServiceEntry", "WorkloadEntry"];
    let r = noteIngest(record(), T0, slices, "a", "Service", watching) as SyncRecord;
    r = noteIngest(r, T0 + 1, slices, "a", "EndpointSlice", watching) as SyncRecord;
    expect(r.syncedAt).toBeUndefined();
    expect(decideSync(r, T0 + 1, slices).clusters[0]).toMatchObject({
      synced: false,
      waitingFor: ["ServiceEntry", "WorkloadEntry"],
    });
    r = noteIngest(r, T0 + 2, slices, "a", "ServiceEntry", watching) as SyncRecord;
    expect(decideSync(r, T0 + 2, slices).synced).toBe(false);
    r = noteIngest(r, T0 + 3, slices, "a", "WorkloadEntry", watching) as SyncRecord;
    expect(r.syncedAt).toBe(T0 + 3);
    expect(decideSync(r, T0 + 3, slices).clusters[0]).toMatchObject({ synced: true, waitingFor: [] });
    // The same resync again changes nothing (nothing is written).
    expect(noteIngest(r, T0 + 4, slices, "a", "WorkloadEntry", watching)).toBeUndefined();
  });

  it("a kind watched later (a CRD installed) shows the cluster waiting but closes no gate again", () => {
    const watching = ["Service", "EndpointSlice"];
    let r = noteIngest(record(), T0, slices, "a", "Service", watching) as SyncRecord;
    r = noteIngest(r, T0 + 1, slices, "a", "EndpointSlice", watching) as SyncRecord;
    expect(r.syncedAt).toBe(T0 + 1);
    r = noteIngest(r, T0 + 2, slices, "a", "Service", [...watching, "Sidecar"]) as SyncRecord;
    const state = decideSync(r, T0 + 2, slices);
    expect(state.clusters[0]).toMatchObject({ synced: false, waitingFor: ["Sidecar"] });
    expect(state.synced).toBe(true);
  });

  it("does not take a cluster id that names an Object.prototype member as already heard from", () => {
    expect(noteIngest(record(), T0, slices, "constructor")?.clusters.constructor).toEqual(cluster());
  });
});

describe("notePublished", () => {
  const synced = record({ clusters: { a: full }, syncedAt: T0 + 10 });
  const cases: {
    name: string;
    record: SyncRecord;
    startedAt: number;
    complete: boolean;
    published: boolean;
  }[] = [
    {
      name: "a complete turn begun after sync",
      record: synced,
      startedAt: T0 + 10,
      complete: true,
      published: true,
    },
    {
      name: "a turn begun before sync",
      record: record({ clusters: { a: full } }),
      startedAt: T0 + 5,
      complete: true,
      published: false,
    },
    {
      name: "a turn that only waited",
      record: synced,
      startedAt: T0 + 20,
      complete: false,
      published: false,
    },
    {
      name: "a complete turn before anything synced",
      record: record(),
      startedAt: T0 + 20,
      complete: true,
      published: false,
    },
    {
      name: "a complete turn after the timeout",
      record: record(),
      startedAt: T0 + 60_000,
      complete: true,
      published: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const next = notePublished(c.record, c.startedAt, c.complete, T0 + 99_000, slices);
      expect(next?.publishedAt).toBe(c.published ? T0 + 99_000 : undefined);
      const state = decideSync(next ?? c.record, T0 + 99_000, slices);
      expect(state.published).toBe(c.published);
    });
  }
  it("is written once", () => {
    const once = notePublished(synced, T0 + 10, true, T0 + 11, slices) as SyncRecord;
    expect(notePublished(once, T0 + 20, true, T0 + 21, slices)).toBeUndefined();
  });
  it("a synced registry is not published before a turn ran", () => {
    expect(decideSync(synced, T0 + 11, slices)).toMatchObject({ synced: true, published: false });
  });
});

describe("syncTransitions", () => {
  const at = (r: SyncRecord, now = T0 + 1) => decideSync(r, now, slices);
  it("says the registry is not synced at start, naming what it waits for", () => {
    expect(syncTransitions(undefined, at(record()))).toEqual([
      "sync: registry not synced: no cluster heard from; proxies keep what they hold until it is",
    ]);
    expect(syncTransitions(undefined, at(record({ clusters: { a: cluster() } })))[0]).toContain(
      "waiting for a",
    );
  });
  it("logs a cluster synced and the registry synced", () => {
    const before = at(record({ clusters: { a: cluster({ services: true }) } }));
    const after = at(record({ clusters: { a: full }, syncedAt: T0 + 1 }));
    expect(syncTransitions(before, after)).toEqual([
      "sync: cluster a synced",
      "sync: registry synced (1 cluster(s))",
    ]);
  });
  it("logs the synced registry published, after its sync", () => {
    const synced = record({ clusters: { a: full }, syncedAt: T0 });
    expect(syncTransitions(undefined, at({ ...synced, publishedAt: T0 + 1 }))).toEqual([
      "sync: cluster a synced",
      "sync: registry synced (1 cluster(s))",
      "sync: the synced registry is published; proxies may be told to remove what they hold again",
    ]);
  });
  it("warns when the timeout let it sync", () => {
    const r = record({ clusters: { a: cluster() } });
    const lines = syncTransitions(at(r), at(r, T0 + 60_000));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sync: WARNING: PILOT_SYNC_TIMEOUT passed .*still waiting for a/);
  });
  it("says nothing when nothing changed", () => {
    const s = at(record({ clusters: { a: full }, syncedAt: T0 }));
    expect(syncTransitions(s, s)).toEqual([]);
  });
});
