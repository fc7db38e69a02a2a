/**
 * The Worker end to end on workerd: ingest ▶ debounce on the MeshStore alarm ▶ Envoy's unary
 * Fetch RPCs and GetStatus over Connect (JSON and binary), then an incremental EndpointSlice
 * change and the cron safety net. Tests in this file share one storage and run in order.
 */

import { createScheduledController, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createFetchClient } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import entry from "../../functions/workers/index.ts";
import { ClusterDiscoveryService } from "../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { EndpointDiscoveryService } from "../../lib/gen/envoy/service/endpoint/v3/eds_pb.ts";
import { ListenerDiscoveryService } from "../../lib/gen/envoy/service/listener/v3/lds_pb.ts";
import { RouteDiscoveryService } from "../../lib/gen/envoy/service/route/v3/rds_pb.ts";
import { resourceVersion } from "../../lib/resources/version.ts";
import { xdsRegistry } from "../../lib/xds/registry.ts";
import events from "../fixtures/parity/events.json";
import { checkSotwResponse } from "../support/xds-check.ts";
import { danglingReferences } from "../support/xds-refs.ts";
import {
  advanceClockTo,
  alarmAt,
  envoyNode,
  fetchJson,
  freezeClock,
  getStatus,
  ingest,
  mesh,
  origin,
  resourceName,
  runAlarmsUntilIdle,
  type Status,
  TypeUrl,
  worker,
  xdsAuth,
} from "./support.ts";

const reviewsCluster = "outbound|9080||reviews.default.svc.cluster.local";
const reviewsHttpCluster = "outbound|8080||reviews.default.svc.cluster.local";
const reviewsListener = "reviews.default.svc.cluster.local:9080";
const types = [TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route] as const;

/** A fixture slice by name, as the API server would send its next version (a newer resourceVersion). */
function nextVersionOfSlice(name: string) {
  const found = events.find((e) => e.object.kind === "EndpointSlice" && e.object.metadata.name === name);
  expect(found, `slice ${name} in the fixture`).toBeDefined();
  const slice = structuredClone(found!.object) as {
    metadata: { name: string; resourceVersion: string };
    endpoints: { addresses: string[]; conditions: Record<string, boolean> }[];
  };
  slice.metadata.resourceVersion = String(Number(slice.metadata.resourceVersion) + 1000);
  return slice;
}

/** The fixture's first reviews slice, with its not-ready endpoint now ready. */
function reviewsSliceAllReady() {
  const slice = nextVersionOfSlice("reviews-8x7kq");
  for (const e of slice.endpoints) {
    e.conditions.ready = true;
    e.conditions.serving = true;
  }
  return slice;
}

let log: MockInstance<typeof console.log>;
const logged = () => log.mock.calls.map((c) => String(c[0]));

beforeAll(() => {
  freezeClock();
  log = vi.spyOn(console, "log");
});
afterAll(() => {
  log.mockRestore();
  vi.useRealTimers();
});

describe("Worker pipeline on workerd", () => {
  let published: Status;

  it("answers /ready, and names a request it has no route for", async () => {
    const ready = await worker("/ready");
    expect(ready.status).toBe(200);
    // PILOT_SYNC_TIMEOUT is 0s in these tests: synced by the timeout, published after a turn.
    expect(await ready.json()).toMatchObject({ ready: true, synced: true, timedOut: true, clusters: [] });
    const missing = await worker("/v2/nothing");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no route for GET /v2/nothing" });
  });

  it("ingest queues one push and arms the alarm for now, pushing nothing yet", async () => {
    const at = Date.now();
    const res = await ingest(events);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      events: events.length,
      applied: events.length,
      push: { full: true, configs: 2 },
    });
    expect(await alarmAt()).toBe(at);
    const status = await getStatus();
    expect(status).toMatchObject({ pushVersion: 0, pendingPushes: 1 });
    for (const t of types) expect(status.versions[t]).toEqual({});
  });

  it("the first alarm waits out PILOT_DEBOUNCE_AFTER (100ms); the next one pushes", async () => {
    const queuedAt = Date.now();
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
    expect(await alarmAt()).toBe(queuedAt + 100);
    expect(await getStatus()).toMatchObject({ pushVersion: 0, pendingPushes: 1 });

    advanceClockTo(queuedAt + 100);
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
    expect(await alarmAt()).toBeNull();
    published = await getStatus();
    expect(published).toMatchObject({ pushVersion: 1, pendingPushes: 0 });
    expect(logged()).toContainEqual(
      expect.stringMatching(
        /\tinfo\tpush\tpush 1: full, 12 resource\(s\) changed, 100ms after the first event /,
      ),
    );
  });

  it("serves FetchClusters/Endpoints/Listeners/Routes over Connect JSON, as GetStatus lists them", async () => {
    for (const typeUrl of types) {
      const res = await fetchJson(typeUrl);
      expect(res.typeUrl).toBe(typeUrl);
      expect(res.versionInfo).toMatch(/^[0-9a-f]{16}$/);
      for (const r of res.resources) expect(r["@type"]).toBe(typeUrl);
      expect(res.resources.map(resourceName).sort()).toEqual(
        Object.keys(published.versions[typeUrl]!).sort(),
      );
    }
    expect(Object.keys(published.versions[TypeUrl.cluster]!)).toContain(reviewsCluster);
    expect(Object.keys(published.versions[TypeUrl.endpoint]!)).toContain(reviewsCluster);
    expect(Object.keys(published.versions[TypeUrl.listener]!)).toContain(reviewsListener);
    expect(Object.keys(published.versions[TypeUrl.route]!)).toContain(reviewsListener);

    const named = await fetchJson(TypeUrl.endpoint, [
      reviewsCluster,
      "outbound|1||missing.default.svc.cluster.local",
    ]);
    expect(named.resources.map(resourceName)).toEqual([reviewsCluster]);
    const lbEndpoints = JSON.stringify(named.resources[0]);
    expect(lbEndpoints).toContain("10.244.1.12");
    expect(lbEndpoints).toContain("10.244.3.21"); // the second slice
  });

  it("serves the same resources over Connect binary, bytes hashing to the published versions", async () => {
    const transport = createTransport({
      httpClient: createFetchClient(((input, init) => exports.default.fetch(input, init)) as typeof fetch),
      baseUrl: origin,
      useBinaryFormat: true,
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", xdsAuth.authorization);
          return next(req);
        },
      ],
      acceptCompression: [],
      sendCompression: null,
      compressMinBytes: 1024,
      readMaxBytes: 0xffffffff,
      writeMaxBytes: 0xffffffff,
    });
    const calls = {
      [TypeUrl.cluster]: (r: object) => createClient(ClusterDiscoveryService, transport).fetchClusters(r),
      [TypeUrl.endpoint]: (r: object) => createClient(EndpointDiscoveryService, transport).fetchEndpoints(r),
      [TypeUrl.listener]: (r: object) => createClient(ListenerDiscoveryService, transport).fetchListeners(r),
      [TypeUrl.route]: (r: object) => createClient(RouteDiscoveryService, transport).fetchRoutes(r),
    };
    const all: { typeUrl: string; value: Uint8Array }[] = [];
    for (const typeUrl of types) {
      const res = await calls[typeUrl]({ node: envoyNode, typeUrl });
      checkSotwResponse(res);
      all.push(...res.resources);
      const served: Record<string, string> = {};
      for (const any of res.resources) {
        expect(any.typeUrl).toBe(typeUrl);
        const message = anyUnpack(any, xdsRegistry) as { name?: string; clusterName?: string } | undefined;
        served[(message?.name || message?.clusterName) as string] = await resourceVersion(any.value);
      }
      expect(served).toEqual(published.versions[typeUrl]);
    }
    // The whole mesh, every type: nothing names a resource the Worker does not serve.
    expect(danglingReferences(all)).toEqual([]);
  });

  it("a MODIFIED EndpointSlice changes only the ClusterLoadAssignment versions of its service", async () => {
    const before = published;
    const res = await ingest([{ type: "MODIFIED", object: reviewsSliceAllReady() }]);
    expect(await res.json()).toMatchObject({ applied: 1, push: { full: false } });
    expect(await runAlarmsUntilIdle()).toBe(2);
    const after = await getStatus();
    expect(after).toMatchObject({ pushVersion: before.pushVersion + 1, pendingPushes: 0 });
    for (const t of [TypeUrl.cluster, TypeUrl.listener, TypeUrl.route]) {
      expect(after.versions[t]).toEqual(before.versions[t]);
    }
    const changed = Object.entries(after.versions[TypeUrl.endpoint]!)
      .filter(([name, v]) => before.versions[TypeUrl.endpoint]![name] !== v)
      .map(([name]) => name)
      .sort();
    expect(changed).toEqual([reviewsHttpCluster, reviewsCluster].sort());
    expect(JSON.stringify((await fetchJson(TypeUrl.endpoint, [reviewsCluster])).resources)).toContain(
      "10.244.2.7",
    );
    expect(logged()).toContainEqual(
      expect.stringMatching(
        /\tinfo\tpush\tpush 2: incremental, 2 resource\(s\) changed, 100ms after the first event /,
      ),
    );
    published = after;
  });

  it("the same event again changes nothing and arms no alarm", async () => {
    const res = await ingest([{ type: "MODIFIED", object: reviewsSliceAllReady() }]);
    expect(await res.json()).toMatchObject({ applied: 0, stale: 1, push: null });
    expect(await alarmAt()).toBeNull();
    expect(await getStatus()).toEqual(published);
  });

  it("the cron trigger pushes a queue whose kick was lost", async () => {
    const slice = nextVersionOfSlice("reviews-m4n2c");
    slice.endpoints[0]!.addresses = ["10.244.3.22"];
    expect((await ingest([{ type: "MODIFIED", object: slice }])).status).toBe(200);
    await runInDurableObject(mesh(), (_object, state) => state.storage.deleteAlarm());
    expect(await getStatus()).toMatchObject({ pushVersion: published.pushVersion, pendingPushes: 1 });

    await entry.scheduled(createScheduledController({ cron: "*/1 * * * *" }), env);
    expect(await alarmAt()).toBe(Date.now());
    await runAlarmsUntilIdle();
    expect(await getStatus()).toMatchObject({ pushVersion: published.pushVersion + 1, pendingPushes: 0 });
  });
});
