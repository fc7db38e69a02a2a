/** The poll hub: who a push wakes, coalescing, and the per-push snapshot every woken listener shares. */
import { describe, expect, it } from "vitest";
import { createPollHub, createSnapshotSource } from "../../../lib/xds/poll-hub.ts";
import type { ResourceSource } from "../../../lib/xds/source.ts";
import { CDS, EDS, mutableSource, res, track, until } from "./poll-support.ts";

describe("createPollHub", () => {
  it("wakes only listeners whose interest a change meets; undefined changes wake all", async () => {
    const { source } = mutableSource();
    const hub = createPollHub(source);
    const eds = hub.listen((c) => c.typeUrl === EDS);
    const cds = hub.listen((c) => c.typeUrl === CDS);
    const never = new AbortController().signal;
    const e = track(eds.next(never));
    const c = track(cds.next(never));
    await until(() => hub.waiting === 2);
    hub.publish({ changes: [{ typeUrl: EDS, name: "a" }] });
    expect(await e.value).toBeDefined();
    expect(c.done()).toBe(false);
    hub.publish({});
    expect(await c.value).toBeDefined();
    eds.close();
    cds.close();
    expect(hub.size).toBe(0);
  });

  it("remembers a push that arrived before next(), and coalesces several into one", async () => {
    const { source } = mutableSource();
    const hub = createPollHub(source);
    const l = hub.listen(() => true);
    hub.publish({ changes: [{ typeUrl: EDS, name: "a" }] });
    hub.publish({ changes: [{ typeUrl: EDS, name: "b" }] });
    const signal = new AbortController();
    expect(await l.next(signal.signal)).toBeDefined();
    const again = track(l.next(signal.signal));
    await until(() => hub.waiting === 1);
    expect(again.done()).toBe(false);
    signal.abort();
    expect(await again.value).toBeUndefined();
    l.close();
  });

  it("close() ends a pending next() and is idempotent", async () => {
    const hub = createPollHub(mutableSource().source);
    const l = hub.listen(() => true);
    const n = l.next(new AbortController().signal);
    l.close();
    l.close();
    expect(await n).toBeUndefined();
    expect(hub.size).toBe(0);
  });
});

describe("createSnapshotSource", () => {
  it("reads each listing and each name once, and answers names from a listing it has", async () => {
    const m = mutableSource([res(EDS, "a", "1"), res(EDS, "b", "1"), res(CDS, "c", "1")]);
    const snap = createSnapshotSource(m.source);
    const [x, y] = await Promise.all([snap.get(EDS, ["b", "a", "zz"]), snap.get(EDS, ["a", "b"])]);
    expect(x.map((r) => r.name)).toEqual(["a", "b"]);
    expect(y.map((r) => r.name)).toEqual(["a", "b"]);
    expect(m.counts.get).toBe(1);
    await snap.get(EDS, ["a", "zz"]);
    expect(m.counts.get).toBe(1);
    expect((await snap.list(CDS)).map((r) => r.name)).toEqual(["c"]);
    expect((await snap.get(CDS, ["c", "c", "d"])).map((r) => r.name)).toEqual(["c"]);
    await snap.list(CDS);
    expect(m.counts).toEqual({ get: 1, list: 1 });
  });

  it("forgets a failed read, so the next call retries", async () => {
    let fail = true;
    const m = mutableSource([res(EDS, "a", "1")]);
    const flaky: ResourceSource = {
      get: (t, n) => (fail ? Promise.reject(new Error("store down")) : m.source.get(t, n)),
      list: (t) => (fail ? Promise.reject(new Error("store down")) : m.source.list(t)),
    };
    const snap = createSnapshotSource(flaky);
    await expect(snap.get(EDS, ["a"])).rejects.toThrow("store down");
    await expect(snap.list(EDS)).rejects.toThrow("store down");
    fail = false;
    expect((await snap.get(EDS, ["a"])).map((r) => r.name)).toEqual(["a"]);
    expect((await snap.list(EDS)).map((r) => r.name)).toEqual(["a"]);
  });
});
