/**
 * The relay feeding the real control plane (npm start as a child process) from the fake API server:
 * the initial resyncs publish the service, a watch event updates it, and a relist after an expired
 * resourceVersion deletes what the cluster lost while the watch was away.
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Relay } from "../../../functions/node/relay/relay.ts";
import { StatusService } from "../../../lib/gen/edgepilot/v1/status_pb.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { named, pod, relayToControlPlane, slice, svc } from "./harness.ts";

let cp: RunningControlPlane;
let api: FakeApiServer;
let relay: Relay;
const logs: string[] = [];
const eds = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const reviews = "outbound|9080||reviews.default.svc.cluster.local";
const ratings = "outbound|9080||ratings.default.svc.cluster.local";

async function published(): Promise<Record<string, string>> {
  const client = createClient(
    StatusService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  const s = await client.getStatus({});
  return s.types.find((t) => t.typeUrl === eds)?.versions ?? {};
}

async function until(what: string, check: (names: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const names = Object.keys(await published()).sort();
    if (check(names)) return names;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; published ${names.join(", ")}\n${logs.join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  api = await startFakeApiServer();
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  for (const n of ["reviews", "ratings"]) api.apply("services", svc(n));
  api.apply("endpointslices", slice("reviews-1", "reviews", ["10.1.0.1"]));
  api.apply("endpointslices", slice("ratings-1", "ratings", ["10.1.0.2"]));
  api.apply("pods", pod("reviews-v1", "10.1.0.1"));
  relay = relayToControlPlane(api, cp, logs);
  relay.start();
});

afterAll(async () => {
  await relay?.stop(500);
  await api?.close();
  await cp?.stop();
});

describe("relay ▶ control plane", () => {
  it("initial resyncs publish every listed service, accepted without a rejection", async () => {
    expect(await until("both services", (n) => n.includes(reviews) && n.includes(ratings))).toEqual([
      ratings,
      reviews,
    ]);
    // The services can be published before the last of the six resyncs is answered (a cluster is
    // synced by its Services and endpoint kind): wait for all six, then none may have been refused.
    const deadline = Date.now() + 15_000;
    while (relay.stats().deliveredResyncs < 6 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(relay.stats()).toMatchObject({ deliveredResyncs: 6, rejectedEvents: 0, rejectedResyncs: 0 });
  });

  it("a watch event reaches the control plane", async () => {
    api.apply("services", svc("details"));
    api.apply("endpointslices", slice("details-1", "details", ["10.1.0.3"]));
    await until("details", (n) => n.includes("outbound|9080||details.default.svc.cluster.local"));
  });

  it("a relist after 410 deletes what the cluster lost while the watch was away", async () => {
    api.holdWatches();
    api.dropWatches("services");
    api.dropWatches("endpointslices");
    const deadline = Date.now() + 10_000;
    while (api.heldWatches() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    api.remove("services", "default", "ratings");
    api.remove("endpointslices", "default", "ratings-1");
    api.compact();
    api.releaseWatches();
    await until("ratings gone", (n) => !n.includes(ratings) && n.includes(reviews));
    expect(cp.output()).toMatch(/resync of (Service|EndpointSlice) in relay-e2e deleted 1 missed object/);
    expect(relay.stats()).toMatchObject({ rejectedEvents: 0, rejectedResyncs: 0 });
  });
});
