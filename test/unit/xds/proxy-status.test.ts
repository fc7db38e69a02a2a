/** The proxy status recorder and sweep (functions/proxy-status.ts) over the real memory store. */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProxyStatus } from "../../../lib/resources/types.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { ProxyRecord } from "../../../lib/xds/proxy-record.ts";
import {
  createProxyStatusRecorder,
  createProxyStatusRecorders,
  startProxyStatusSweep,
  sweepProxyStatus,
} from "../../../lib/xds/proxy-status.ts";
import { countingStore } from "./counting-store.ts";

const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const NODE = "sidecar~10.1.0.9~client.default~default.svc.cluster.local";

const status = (o: Partial<ProxyStatus> = {}): ProxyStatus => ({
  nodeId: NODE,
  generator: "grpc",
  types: [{ typeUrl: EDS, wildcard: false, subscribed: ["a"], ackedVersion: "v1" }],
  ...o,
});
const nack = (nonce: string, message: string): ProxyStatus =>
  status({
    types: [
      { typeUrl: EDS, wildcard: false, subscribed: ["a"], nack: { versionInfo: "v1", nonce, message } },
    ],
  });

const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

/** A recorder on the fake clock that writes at most once a second. */
function throttledRecorder(store: Store) {
  return createProxyStatusRecorder({
    store,
    log: () => {},
    now: () => Date.now(),
    ttlMs: 60_000,
    minIntervalMs: 1000,
  });
}

describe("proxy status recorder", () => {
  it("writes the latest status, coalescing ACKs that arrive while a write is in flight", async () => {
    const store = countingStore();
    const rec = createProxyStatusRecorder({ store, log: () => {}, now: () => 1000, ttlMs: 60_000 });
    for (let v = 1; v <= 50; v++)
      rec.record(
        status({ types: [{ typeUrl: EDS, wildcard: false, subscribed: [], ackedVersion: `v${v}` }] }),
      );
    await settle();
    const got = await store.get<ProxyRecord>(keys.proxy(NODE));
    expect(got?.value.types[0]?.ackedVersion).toBe("v50");
    expect(got?.value.expiresAt).toBe(61_000);
    expect(store.puts()).toBeLessThanOrEqual(2);
    await rec.close();
  });

  it("with minIntervalMs, writes at once, then at most once per interval: the latest status", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = countingStore();
    const rec = throttledRecorder(store);
    const acked = (v: number) =>
      status({ types: [{ typeUrl: EDS, wildcard: false, subscribed: [], ackedVersion: `v${v}` }] });
    const held = async () => (await store.get<ProxyRecord>(keys.proxy(NODE)))?.value.types[0]?.ackedVersion;
    rec.record(acked(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(await held()).toBe("v1");
    for (let v = 2; v <= 40; v++) {
      rec.record(acked(v));
      await vi.advanceTimersByTimeAsync(20); // an ACK every 20 ms for 780 ms
    }
    expect(await held()).toBe("v1");
    expect(store.puts()).toBe(1);
    await vi.advanceTimersByTimeAsync(220);
    expect(await held()).toBe("v40");
    expect(store.puts()).toBe(2);
    await rec.close();
    expect(await store.get(keys.proxy(NODE))).toBeUndefined();
  });

  it("calls a status read only when a write is due, and writes what it reads then", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = countingStore();
    const rec = throttledRecorder(store);
    let acked = 0;
    let reads = 0;
    const read = () => {
      reads++;
      return status({
        types: [{ typeUrl: EDS, wildcard: false, subscribed: [], ackedVersion: `v${acked}` }],
      });
    };
    const held = async () => (await store.get<ProxyRecord>(keys.proxy(NODE)))?.value.types[0]?.ackedVersion;
    for (acked = 1; acked <= 40; acked++) {
      rec.record(read); // one report per ACK, as the sessions make them
      await vi.advanceTimersByTimeAsync(20);
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(reads).toBe(store.puts()); // one read per record written, none per ACK
    expect(reads).toBe(2);
    expect(await held()).toBe("v41"); // read when written: the status as of then
    await rec.close();
    expect(await store.get(keys.proxy(NODE))).toBeUndefined();
  });

  it("deletes its record when the stream ends, but not one a newer stream of the same proxy owns", async () => {
    const store = createMemoryStore();
    const old = createProxyStatusRecorder({ store, log: () => {} });
    old.record(status());
    await settle();
    await old.close();
    expect(await store.get(keys.proxy(NODE))).toBeUndefined();

    const first = createProxyStatusRecorder({ store, log: () => {} });
    first.record(status());
    await settle();
    const second = createProxyStatusRecorder({ store, log: () => {} }); // the proxy reconnected
    second.record(status());
    await settle();
    await first.close();
    expect(await store.get(keys.proxy(NODE))).toBeDefined();
    await second.close();
    expect(await store.get(keys.proxy(NODE))).toBeUndefined();
  });

  it("keeps a live stream's record fresh, so only a dead process's records expire", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryStore();
    const rec = createProxyStatusRecorder({ store, log: () => {}, now: () => Date.now(), ttlMs: 30_000 });
    rec.record(status());
    await vi.advanceTimersByTimeAsync(0);
    expect((await store.get<ProxyRecord>(keys.proxy(NODE)))?.value.expiresAt).toBe(30_000);
    await vi.advanceTimersByTimeAsync(25_000);
    const refreshed = (await store.get<ProxyRecord>(keys.proxy(NODE)))?.value.expiresAt ?? 0;
    expect(refreshed).toBeGreaterThan(30_000);
    expect(await sweepProxyStatus(store, 31_000)).toBe(0);
    await rec.close();
  });

  it("refuses to key a record by a node id the stream would refuse, and writes nothing without a node id", async () => {
    const store = createMemoryStore();
    const rec = createProxyStatusRecorder({ store, log: () => {} });
    rec.record(status({ nodeId: "x".repeat(2000) }));
    rec.record(status({ nodeId: "" }));
    await settle();
    expect((await store.list(keys.proxyPrefix())).entries).toEqual([]);
    await rec.close();
  });

  it("keys by the escaped node id: a '/' in it cannot reach another key", async () => {
    const store = createMemoryStore();
    const rec = createProxyStatusRecorder({ store, log: () => {} });
    rec.record(status({ nodeId: "../svc/default/x" }));
    await settle();
    expect((await store.list("")).entries.map((e) => e.key)).toEqual(["proxy/..%2Fsvc%2Fdefault%2Fx"]);
    await rec.close();
  });

  it("logs each NACK once per nonce, escaped: a newline in error_detail cannot forge a log line", async () => {
    const lines: string[] = [];
    const rec = createProxyStatusRecorder({ store: createMemoryStore(), log: (l) => lines.push(l) });
    const forged = 'bad\nedgepilot: push 99: full, 0 resource(s) changed\u2028"';
    rec.record(nack("n1", forged));
    rec.record(nack("n1", forged)); // the same NACK reported again (status after another ACK)
    rec.record(status({ nodeId: "evil\nnode" }));
    rec.record(nack("n2", "second"));
    await rec.close();
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => !/[\n\r\u2028\u2029]/.test(l))).toBe(true);
    expect(lines[0]).toBe(
      `xds: "${NODE}" NACKed "${EDS}" (kept "v1"): "bad\\nedgepilot: push 99: full, 0 resource(s) changed\\u2028\\""`,
    );
  });
});

describe("proxy status recorders of many streams", () => {
  const nodeOf = (i: number) => `sidecar~10.1.0.${i}~p${i}.default~default.svc.cluster.local`;
  const ackedBy = (i: number, v: number) => () =>
    status({
      nodeId: nodeOf(i),
      types: [{ typeUrl: EDS, wildcard: false, subscribed: [], ackedVersion: `v${v}` }],
    });
  const held = async (store: Store, i: number) =>
    (await store.get<ProxyRecord>(keys.proxy(nodeOf(i))))?.value.types[0]?.ackedVersion;
  /** Recorders on the fake clock that write each stream at most once a second (the record's ttlMs when given). */
  const throttledRecorders = (store: Store, o: { ttlMs?: number } = {}) =>
    createProxyStatusRecorders({ store, log: () => {}, now: () => Date.now(), minIntervalMs: 1000, ...o });

  it("share one write timer: ACKs within the interval arm no timer per stream, and each latest status is written once it ends", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = countingStore();
    const recorders = throttledRecorders(store, { ttlMs: 60_000 });
    const streams = Array.from({ length: 600 }, () => recorders.recorder());
    streams.forEach((r, i) => {
      r.record(ackedBy(i, 1));
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(store.puts()).toBe(600); // each stream's first status: written at once
    const timersBefore = vi.getTimerCount(); // the shared refresh timer
    for (let v = 2; v <= 5; v++) {
      await vi.advanceTimersByTimeAsync(100);
      streams.forEach((r, i) => {
        r.record(ackedBy(i, v));
      });
    }
    expect(vi.getTimerCount() - timersBefore).toBe(1); // one write timer for 600 streams
    expect(store.puts()).toBe(600);
    // The interval ends: every stream's latest written, in slices of the event loop, once each.
    await vi.advanceTimersByTimeAsync(600);
    expect(store.puts()).toBeGreaterThan(600);
    expect(store.puts()).toBeLessThan(1200); // a slice at a time
    await vi.advanceTimersByTimeAsync(10);
    expect(store.puts()).toBe(1200);
    expect(await held(store, 0)).toBe("v5");
    expect(await held(store, 599)).toBe("v5");
    await Promise.all(streams.map((r) => r.close()));
    expect((await store.list(keys.proxyPrefix())).entries).toEqual([]);
    expect(vi.getTimerCount()).toBeLessThanOrEqual(1); // no refresh left (at most a spent write timer)
  });

  it("writes each waiting stream when its own interval ends, whatever order their statuses came in", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = countingStore();
    const recorders = throttledRecorders(store, { ttlMs: 60_000 });
    const streams = Array.from({ length: 4 }, () => recorders.recorder());
    // Written at 0, 100, 200 and 300 ms; their next statuses come in reverse order, within the interval.
    for (let i = 0; i < 4; i++) {
      streams[i]?.record(ackedBy(i, 1));
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(store.puts()).toBe(4);
    for (let i = 3; i >= 0; i--) streams[i]?.record(ackedBy(i, 2));
    // Now 400 ms: stream i's interval ends at i × 100 + 1000.
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(i === 0 ? 599 : 99);
      expect(await held(store, i)).toBe("v1"); // 1 ms before its interval ends
      await vi.advanceTimersByTimeAsync(1);
      expect(await held(store, i)).toBe("v2");
      expect(store.puts()).toBe(5 + i);
    }
    // Now 1,300 ms; stream 0 was written again at 1,000 (its latest place): the next waits until 2,000.
    streams[0]?.record(ackedBy(0, 3));
    await vi.advanceTimersByTimeAsync(699);
    expect(await held(store, 0)).toBe("v2");
    await vi.advanceTimersByTimeAsync(1);
    expect(await held(store, 0)).toBe("v3");
    // Past its interval a status is written at once; the refresh rewrites every record in turn.
    await vi.advanceTimersByTimeAsync(5000);
    streams[1]?.record(ackedBy(1, 3));
    await vi.advanceTimersByTimeAsync(0);
    expect(await held(store, 1)).toBe("v3");
    const before = store.puts();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(store.puts()).toBeGreaterThanOrEqual(before + 4);
    await Promise.all(streams.map((r) => r.close()));
  });

  it("a stream closed while it waits for its interval is not written", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = countingStore();
    const recorders = throttledRecorders(store);
    const [a, b] = [recorders.recorder(), recorders.recorder()];
    a.record(ackedBy(1, 1));
    b.record(ackedBy(2, 1));
    await vi.advanceTimersByTimeAsync(100);
    a.record(ackedBy(1, 2));
    b.record(ackedBy(2, 2));
    await a.close();
    await vi.advanceTimersByTimeAsync(1000);
    expect(store.puts()).toBe(3);
    expect(await held(store, 1)).toBeUndefined();
    expect(await held(store, 2)).toBe("v2");
    await b.close();
  });
});

describe("proxy status sweep", () => {
  it("deletes expired records (and records without an expiry), keeps live ones", async () => {
    const store = createMemoryStore();
    await store.put(keys.proxy("dead"), { nodeId: "dead", expiresAt: 100 });
    await store.put(keys.proxy("legacy"), { nodeId: "legacy" });
    await store.put(keys.proxy("live"), { nodeId: "live", expiresAt: 10_000 });
    await store.put("svc/default/x/Kubernetes", { not: "a proxy" });
    expect(await sweepProxyStatus(store, 5_000)).toBe(2);
    expect((await store.list("")).entries.map((e) => e.key)).toEqual([
      "proxy/live",
      "svc/default/x/Kubernetes",
    ]);
  });

  it("runs at start and then on its interval, logging what it removed", async () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryStore();
    await store.put(keys.proxy("dead"), { nodeId: "dead", expiresAt: 0 });
    await store.put(keys.proxy("later"), { nodeId: "later", expiresAt: 1_500 });
    const lines: string[] = [];
    const stop = startProxyStatusSweep({
      store,
      log: (l) => lines.push(l),
      now: () => Date.now(),
      intervalMs: 1000,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(lines).toEqual(["xds: removed 1 expired proxy status record(s)"]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(lines).toHaveLength(2);
    expect((await store.list(keys.proxyPrefix())).entries).toEqual([]);
    stop();
  });
});
