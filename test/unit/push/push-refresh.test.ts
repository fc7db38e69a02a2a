/**
 * A refresh push (lib/push/push-refresh.ts): a Full push that names Istio configs or services but
 * publishes nothing of the proxyless set (or assignments only) is still announced, its changes
 * marked a refresh (no fake change among them), so Envoy sidecar snapshots hear of what only they
 * reflect; proxyless Delta and SotW sessions and Poll/Watch calls take nothing for it, a sidecar's
 * Watch wakes; the sidecar snapshots drop what they built; push log records of the older layout
 * (one change of the legacy type) read the same.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { PushRequest } from "../../../lib/model/index.ts";
import type { PushLogEntry } from "../../../lib/push/flush.ts";
import { legacyRefreshType, loggedPush, needsRefresh } from "../../../lib/push/push-refresh.ts";
import { createPushSignal } from "../../../lib/push/signal.ts";
import type { Push, ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, listAll } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createPollHub } from "../../../lib/xds/poll-hub.ts";
import { createPollServer } from "../../../lib/xds/poll-serve.ts";
import { createSidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule } from "../ingest/support/istio.ts";
import { sidecar } from "../registry/istio/builders.ts";
import { harness as deltaHarness, req } from "../xds/delta-harness.ts";
import { pollRequest } from "../xds/poll-support.ts";
import { throughQueue } from "../xds/session-queue.ts";
import { mesh, node, RDS, resource, route } from "../xds/view-support.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;
const eds = (name: string): ResourceChange => ({ typeUrl: EDS, name, version: "v1" });
const request = (full: boolean, configsUpdated: string[] | null): PushRequest =>
  ({ full, configsUpdated, reason: {}, start: 0 }) as unknown as PushRequest;

/** A refresh push (its changes: none, unless given). */
const refresh = (changes: ResourceChange[] = []): Push => ({ version: 1, changes, refresh: true });

describe("needsRefresh", () => {
  it.each([
    [
      "a Full push of a DestinationRule that published nothing",
      request(true, ["DestinationRule/d/r"]),
      [],
      true,
    ],
    ["a Full push of unknown scope that published assignments only", request(true, null), [eds("a")], true],
    [
      "a Full push that published a Cluster",
      request(true, ["ServiceEntry/d/h"]),
      [{ typeUrl: CDS, name: "c", version: "v" }],
      false,
    ],
    [
      "a Full push with a view marker",
      request(true, ["Sidecar/d/s"]),
      [{ typeUrl: TypeUrl.listener, name: "", version: null, view: "d" }],
      false,
    ],
    ["an incremental (EDS) push", request(false, ["ServiceEntry/d/h"]), [eds("a")], false],
    ["a Full push that names nothing", request(true, []), [], false],
    [
      "a Full push naming a PeerAuthentication that published nothing",
      request(true, ["PeerAuthentication/d/default"]),
      [],
      true,
    ],
    [
      "a Full push naming an AuthorizationPolicy beside a Cluster it published",
      request(true, ["AuthorizationPolicy/d/deny", "ServiceEntry/d/h"]),
      [{ typeUrl: CDS, name: "c", version: "v" }],
      true,
    ],
    ["an incremental push cannot name a policy", request(false, ["AuthorizationPolicy/d/deny"]), [], false],
  ] as [string, PushRequest, ResourceChange[], boolean][])("%s", (_what, r, changes, want) => {
    expect(needsRefresh(r, changes)).toBe(want);
  });
});

const port = { name: "http", port: 9080 };
const host = "reviews.default.svc.cluster.local";
const pool = (maxRequestsPerConnection: number, rv: string) =>
  destinationRule(host, [], {
    resourceVersion: rv,
    spec: { trafficPolicy: { connectionPool: { http: { maxRequestsPerConnection } } } },
  });

describe("the flush announces it", () => {
  it("a DestinationRule change only sidecars reflect: one push, no change, a refresh, in the push log", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("reviews", "default", [port])),
      ev("ADDED", pod("reviews-1", "default", "10.0.0.1")),
      ev("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.0.0.1", ready: true }])),
      ev("ADDED", pool(1, "1")),
    );
    await h.settle();
    const published = async () =>
      (await listAll<StoredResource>(h.store, "xds/")).map((e) => `${e.key}@${e.value.version}`);
    const before = await published();
    // maxRequestsPerConnection is no field of the proxyless cluster (only http2MaxRequests is).
    await h.ingest(ev("MODIFIED", pool(5, "2")));
    const [f] = await h.settle();
    expect(f?.changes).toEqual([]);
    expect(f?.refresh).toBe(true);
    // The push version moved: streams and Poll/Watch hubs hear of it.
    expect(f?.version).toBe(2);
    expect(await published()).toEqual(before);
    const entry = (await h.store.get<PushLogEntry>(keys.pushLog(f?.version ?? 0)))?.value;
    expect(entry).toMatchObject({ changes: [], changeCount: 0, refresh: true });
    // An endpoint-only (incremental) push carries none.
    await h.ingest(
      ev(
        "MODIFIED",
        endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.0.0.1", ready: false }]),
      ),
    );
    const [g] = await h.settle();
    expect(g?.request?.full).toBe(false);
    expect(g?.refresh).toBeUndefined();
  });
});

describe("a Sidecar's ingress change", () => {
  it("publishes no view change (proxyless views do not see ingress): a refresh alone", async () => {
    const h = createHarness();
    const withIngress = (port: number, rv: string) => ({
      ...sidecar({
        ingress: [{ port: { number: port, protocol: "HTTP" }, defaultEndpoint: "127.0.0.1:8080" }],
      }),
      metadata: {
        name: "default",
        namespace: "default",
        resourceVersion: rv,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
    });
    await h.ingest(ev("ADDED", service("reviews", "default", [port])), ev("ADDED", withIngress(9080, "1")));
    await h.settle();
    await h.ingest(ev("MODIFIED", withIngress(9090, "2")));
    const [f] = await h.settle();
    expect(f?.changes).toEqual([]);
    expect(f?.refresh).toBe(true);
  });
});

describe("proxyless streams take nothing for it", () => {
  it("Delta: a wildcard CDS and named EDS subscriber sends nothing, reads nothing", async () => {
    const d = deltaHarness();
    await d.publish(CDS, "c1");
    await d.publish(EDS, "c1");
    await d.session.onRequest(req({ typeUrl: CDS }));
    await d.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["c1"] }));
    expect(await d.session.onPush(undefined, refresh().changes)).toEqual([]);
    expect(await throughQueue(d.session, () => d.session.onPush(undefined, refresh().changes))).toEqual([]);
  });

  it("SotW: a CDS and EDS subscriber sends nothing", async () => {
    const store = createMemoryStore();
    let n = 0;
    const session = createSotwSession({ source: createStoreSource(store), nonce: () => `n${++n}` });
    await session.onRequest(create(DiscoveryRequestSchema, { typeUrl: CDS }));
    await session.onRequest(create(DiscoveryRequestSchema, { typeUrl: EDS, resourceNames: ["c1"] }));
    expect(await session.onPush(undefined, refresh().changes)).toEqual([]);
    expect(await throughQueue(session, () => session.onPush(undefined, refresh().changes))).toEqual([]);
  });

  it("Watch: a proxyless Watch through views is not woken (reads nothing); a shared change wakes it", async () => {
    const m = await mesh();
    let reads = 0;
    const counted = {
      get(t: string, n: readonly string[]) {
        reads++;
        return m.base.get(t, n);
      },
      list(t: string) {
        reads++;
        return m.base.list(t);
      },
    };
    const hub = createPollHub(counted);
    const polls = createPollServer({
      source: counted,
      hub,
      limits: { maxNamesPerRequest: 100, maxStreams: 10 },
      views: m.views,
    });
    const stop = new AbortController();
    const w = polls.watch(pollRequest(RDS, { resourceNamesSubscribe: [route("c")], node: node("c") }), {
      signal: stop.signal,
    });
    await w.next();
    const next = w.next();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    reads = 0;
    hub.publish(refresh());
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(reads).toBe(0);
    expect(hub.waiting).toBe(1);
    await m.store.put(keys.resource(RDS, route("c")), resource("c", "v9"));
    hub.publish({ changes: [{ typeUrl: RDS, name: route("c") }] });
    const woke = await next;
    expect(woke.done).toBe(false);
    expect(reads).toBeGreaterThan(0);
    stop.abort();
  });

  it("Watch: a listener that wakes on refreshes (a sidecar's) is woken by one; one that does not is not", async () => {
    const hub = createPollHub({ get: async () => [], list: async () => [] });
    const sidecarWatch = hub.listen(
      () => false,
      () => true,
    );
    const proxyless = hub.listen(
      () => false,
      () => false,
    );
    const stop = new AbortController();
    hub.publish(refresh());
    // Assignments alone, no refresh: neither.
    hub.publish({ changes: [eds("a")] });
    expect(await sidecarWatch.next(stop.signal)).toBeDefined();
    const waited = proxyless.next(stop.signal);
    stop.abort();
    expect(await waited).toBeUndefined();
  });
});

describe("sidecar snapshots hear it", () => {
  it("a refresh is no EDS-only push: every snapshot is dropped", async () => {
    const s = createSidecarSnapshots({ store: createMemoryStore(), cache: true });
    expect(s.endpointsOnly(refresh())).toBe(false);
    expect(s.endpointsOnly(refresh([eds("a")]))).toBe(false);
    expect(s.endpointsOnly({ version: 1, changes: [eds("a")] })).toBe(true);
  });
});

describe("the refresh travels with the push", () => {
  it("gathered pushes (a signal's waiting announcement) say it when either did", async () => {
    // One listener told per slice: the first push's second listener waits for the next turn, the
    // second push waits behind it, and the third joins the second.
    const signal = createPushSignal(undefined, {
      sliceMs: 0,
      minPerSlice: 1,
      now: () => 0,
      yieldNow: () => new Promise((r) => setImmediate(r)),
    });
    const got: Push[] = [];
    signal.subscribe((push) => got.push(push));
    signal.subscribe(() => undefined);
    signal.emit({ version: 1, changes: [eds("a")] });
    signal.emit({ version: 2, changes: [eds("b")] });
    signal.emit({ ...refresh(), version: 3 });
    for (let i = 0; i < 10 && got.length < 2; i++) await new Promise((r) => setImmediate(r));
    expect(got).toHaveLength(2);
    expect(got.at(-1)).toEqual({ version: 3, changes: [eds("b")], refresh: true });
  });

  it("push log records of the older layout (one change of the legacy type) read as a refresh, that change left out", () => {
    const legacy = {
      typeUrl: legacyRefreshType,
      name: "configs",
      version: "configs",
    } as unknown as ResourceChange;
    expect(loggedPush([legacy], undefined)).toEqual({ changes: [], refresh: true });
    expect(loggedPush([eds("a"), legacy], undefined)).toEqual({ changes: [eds("a")], refresh: true });
    expect(loggedPush([eds("a")], true)).toEqual({ changes: [eds("a")], refresh: true });
    expect(loggedPush([eds("a")], undefined)).toEqual({ changes: [eds("a")], refresh: false });
  });
});
