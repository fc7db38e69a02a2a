/**
 * A control plane `kill -9`ed and restarted on the same ports with an empty (memory) store, while
 * proxies stay connected: a real grpc-js-xds client keeps calling real backends and loses no call;
 * a raw Delta client reconnecting with initial_resource_versions is told to remove nothing it
 * holds before the resync arrives, and gets the real removals after; a raw SotW client gets no
 * CDS answer lacking its clusters before the resync. The restarted one hears the Services resync
 * first and pushes it before the EndpointSlices arrive, and those before the Pods: no proxy is
 * ever sent reviews' ClusterLoadAssignment emptied meanwhile, for want of endpoints or of their
 * pods (a raw Delta EDS watcher records every one it gets).
 * Takes ~10s: two control-plane starts and a grpc-js-xds reconnect backoff are the point of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, startBackend } from "../support/backends.ts";
import { endpointSlice, pod, service } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { bootstrapXds, type WhoClient, whoClient } from "../support/xds-client.ts";
import {
  callLoop,
  cdsNames,
  listOf,
  resync,
  statusSync,
  syncOf,
  untilOutput,
  untilPushed,
  untilStreams,
  watchEds,
} from "./support.ts";

const ns = "default";
const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const reviewsCluster = "outbound|9080||reviews.default.svc.cluster.local";
const ratingsCluster = "outbound|9080||ratings.default.svc.cluster.local";
// Long enough that only the resync can sync the restarted control plane within the test.
const env = { PILOT_SYNC_TIMEOUT: "5m", PILOT_DEBOUNCE_AFTER: "10ms" };

let cp: RunningControlPlane;
let backends: Backend[] = [];
let client: WhoClient;
let backendPort: number;
let firstInstance: string;
const grpcPort = { name: "grpc", port: 9080 };

/**
 * The mesh: reviews on 127.0.0.1, ratings on 127.0.0.2; `withRatings: false` is the mesh after
 * ratings was deleted. `podsLast`: the relay's watchers list concurrently and the Pod list, the
 * largest, comes last: the Services resync is pushed and calls go on for 300ms, then the
 * EndpointSlices (the registry is synced; the endpoints wait for their pods) and 300ms more, then
 * the Pods.
 */
async function resyncMesh(
  target: RunningControlPlane,
  withRatings: boolean,
  podsLast = false,
): Promise<void> {
  const port = { name: "grpc", port: backendPort };
  const names = withRatings ? ["reviews", "ratings"] : ["reviews"];
  const ips: Record<string, string> = { reviews: "127.0.0.1", ratings: "127.0.0.2" };
  const pods = () =>
    resync(
      target,
      "Pod",
      listOf(
        "PodList",
        names.map((n) => pod(n, ns, ips[n] as string)),
      ),
    );
  if (!podsLast) await pods();
  const from = target.output().length;
  await resync(
    target,
    "Service",
    listOf(
      "ServiceList",
      names.map((n) => service(n, ns, [grpcPort])),
    ),
  );
  if (podsLast) {
    await untilPushed(target, from);
    await new Promise((r) => setTimeout(r, 300));
  }
  const slicesFrom = target.output().length;
  await resync(
    target,
    "EndpointSlice",
    listOf(
      "EndpointSliceList",
      names.map((n) => endpointSlice(`${n}-1`, n, ns, port, [{ ip: ips[n] as string, ready: true }])),
    ),
  );
  if (!podsLast) return;
  // The turn after sync regenerates what was held for the endpoints (and holds it for the pods).
  await untilOutput(target, slicesFrom, /whose endpoints were held back/);
  await new Promise((r) => setTimeout(r, 300));
  await pods();
}

beforeAll(async () => {
  backendPort = await freePort();
  backends = [
    await startBackend("reviews", "127.0.0.1", backendPort),
    await startBackend("ratings", "127.0.0.2", backendPort),
  ];
  cp = await startControlPlane(env);
  expect((await syncOf(cp)).synced).toBe(false);
  await resyncMesh(cp, true);
  const synced = await syncOf(cp);
  expect(synced).toMatchObject({
    synced: true,
    clusters: [{ cluster: "Kubernetes", services: true, endpoints: true, synced: true }],
  });
  firstInstance = synced.instance;
  bootstrapXds(cp.xdsPort, "sidecar~127.0.0.9~restart-client.default~default.svc.cluster.local");
  client = whoClient("xds:///reviews.default.svc.cluster.local:9080");
  // The first call waits for the client's first name resolution (a loaded machine can take more
  // than the call loop's 1s deadline): made here, so the loop counts calls through the restart only.
  expect(await client.who(10_000)).toBe("reviews");
});

afterAll(async () => {
  client?.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

/** The raw clients' node: every ADS stream's first request names one. */
const proxyNode = "sidecar~127.0.0.8~raw-client.default~default.svc.cluster.local";
const edsNode = "sidecar~127.0.0.7~eds-watcher.default~default.svc.cluster.local";

async function eventually(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: never happened`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("kill -9 and restart with an empty memory store", () => {
  it("keeps every proxy's resources until the resync, and loses no call", async () => {
    const { openAds } = await import("../support/ads-client.ts");
    const { openDelta } = await import("../delta/delta-client.ts");
    // Connected before the restart: grpc-js-xds calling, a Delta and a SotW client holding CDS.
    const calls = callLoop(client);
    await calls.until((c) => c.ok >= 5, "first calls");
    const delta = openDelta(cp.xdsPort);
    delta.send({ typeUrl: CDS, node: { id: proxyNode, metadata: { GENERATOR: "grpc" } } });
    // The first answer may take a while on a loaded machine; then whatever follows it.
    expect(await delta.next(5000)).toBeDefined();
    await delta.drain(200);
    const held = delta.holds(CDS);
    expect([...held.keys()].sort()).toEqual([ratingsCluster, reviewsCluster]);
    const sotw = openAds(cp.xdsPort);
    sotw.send({ typeUrl: CDS, node: { id: proxyNode, metadata: { GENERATOR: "grpc" } } });
    const before = await sotw.next();
    expect(cdsNames(before)).toEqual([ratingsCluster, reviewsCluster]);
    // A Delta EDS watcher holding reviews' assignment with its one endpoint.
    const eds = watchEds(cp.xdsPort, edsNode, [reviewsCluster]);
    await eventually(() => eds.held.has(reviewsCluster), "the watcher's first assignment");
    expect(eds.events).toEqual([{ name: reviewsCluster, endpoints: 1 }]);
    const edsHeld = Object.fromEntries(eds.held);
    delta.close();
    sotw.close();
    eds.close();

    expect(await cp.stop("SIGKILL")).toBe(null);
    const restartedAt = Date.now();
    cp = await startControlPlane(env, { port: cp.port, xdsPort: cp.xdsPort });
    const restart = await syncOf(cp);
    expect(restart).toMatchObject({ synced: false, timedOut: false, clusters: [] });
    expect(restart.instance).not.toBe(firstInstance);
    // GetStatus says the same; a refused batch still names the instance (past the token check).
    expect(await statusSync(cp)).toMatchObject({
      synced: false,
      published: false,
      instance: restart.instance,
    });
    const refused = await cp.post(undefined, { raw: "{" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-edgepilot-instance")).toBe(restart.instance);
    expect(
      (await cp.post(undefined, { raw: "[]", token: "wrong" })).headers.has("x-edgepilot-instance"),
    ).toBe(false);
    console.log(`e2e restart: killed ▶ ready again in ${Date.now() - restartedAt}ms, not synced`);

    // (b) Delta reconnects saying what it holds; (c) SotW reconnects with its version_info.
    const delta2 = openDelta(cp.xdsPort);
    delta2.send({
      typeUrl: CDS,
      node: { id: proxyNode, metadata: { GENERATOR: "grpc" } },
      initialResourceVersions: Object.fromEntries(held),
    });
    const sotw2 = openAds(cp.xdsPort);
    sotw2.send({
      typeUrl: CDS,
      node: { id: proxyNode, metadata: { GENERATOR: "grpc" } },
      versionInfo: before?.versionInfo ?? "",
    });
    // Before any resync: nothing removed, no SotW answer (it would lack every cluster).
    expect((await delta2.drain(500)).flatMap((r) => r.removedResources)).toEqual([]);
    expect(await sotw2.next(300)).toBeUndefined();

    // Wait for grpc-js-xds to reconnect by itself (its backoff grew while we were down): probe
    // services posted as events show up in push lines, which count the streams they reached.
    // Clients holding nothing of them get them at once; the resync below deletes them.
    const probes = await untilStreams(cp, 3);
    console.log(`e2e restart: grpc-js-xds reconnected ${Date.now() - restartedAt}ms after the kill`);
    expect((await delta2.drain(300)).flatMap((r) => r.removedResources)).toEqual([]);
    expect(await sotw2.next(100)).toBeUndefined();
    // The EDS watcher reconnects saying what it holds (opened after the stream count above).
    const eds2 = watchEds(cp.xdsPort, edsNode, [reviewsCluster], edsHeld);

    // The relay's lists arrive, Services pushed before EndpointSlices, those before Pods; ratings
    // was deleted while the control plane was down.
    await resyncMesh(cp, false, true);
    expect(await syncOf(cp)).toMatchObject({ synced: true, instance: restart.instance });
    const after = await delta2.drain(300);
    expect(after.flatMap((r) => r.removedResources).sort()).toEqual([...probes, ratingsCluster].sort());
    // reviews is unchanged (same content, same version), so it is neither resent nor removed.
    expect(after.flatMap((r) => r.resources.map((x) => x.name))).toEqual([]);
    const answer = await sotw2.next();
    expect(cdsNames(answer)).toEqual([reviewsCluster]);
    expect(cp.output()).toMatch(/sync: registry synced/);
    delta2.close();
    sotw2.close();
    // reviews' assignment was never sent emptied nor removed: the same version it held, nothing sent.
    await new Promise((r) => setTimeout(r, 200));
    expect(eds2.error()).toBe("");
    expect(eds2.events).toEqual([]);
    expect(Object.fromEntries(eds2.held)).toEqual(edsHeld);
    eds2.close();

    // (a) grpc-js-xds reconnected by itself and kept calling reviews the whole time.
    const okNow = calls.stats().ok;
    await calls.until((c) => c.ok >= okNow + 5, "calls after the resync");
    const total = calls.stop();
    console.log(
      `e2e restart: grpc-js-xds made ${total.ok + total.failed} calls through kill -9, restart and resync; lost ${total.failed}`,
    );
    expect(total.failed, total.errors.join("\n")).toBe(0);
    expect(total.others).toBe(0);
  });
});
