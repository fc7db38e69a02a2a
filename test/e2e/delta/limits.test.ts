/**
 * Delta ADS conformance over the real server, part 4: a proxy that asks for garbage gets a clear
 * gRPC error on its own stream while other streams keep working; the per-instance stream limit.
 */
import { createServer, type Http2Server, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsRoutes } from "../../../functions/xds.ts";
import { createChangeFeed } from "../../../lib/core/change-feed.ts";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createXdsServer } from "../../../lib/xds/server.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type DeltaStream, openDelta } from "./delta-client.ts";
import { apply, CDS, EDS, names, node, serviceEvents, sliceEvent, summary } from "./mesh.ts";

const streams: DeltaStream[] = [];
const track = (s: DeltaStream) => {
  streams.push(s);
  return s;
};
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});

describe("Delta ADS: garbage ends only the stream that sent it", () => {
  let cp: RunningControlPlane;
  const reviews = names("reviews");
  beforeAll(async () => {
    cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
    await apply(cp, serviceEvents("reviews", ["10.4.0.1", "10.4.0.2"]));
  });
  afterAll(async () => {
    await cp?.stop();
  });

  const garbage = [
    {
      name: "an unknown type_url",
      req: { typeUrl: "type.googleapis.com/envoy.service.runtime.v3.Runtime" },
      code: Code.InvalidArgument,
      message: /type_url ".*Runtime" is not served by this control plane; it serves .*Cluster/,
    },
    {
      name: "an empty type_url",
      req: { resourceNamesSubscribe: ["x"] },
      code: Code.InvalidArgument,
      message: /type_url is empty/,
    },
    {
      name: "more than 10,000 names in one request",
      req: { typeUrl: EDS, resourceNamesSubscribe: Array.from({ length: 10_001 }, (_, i) => `n${i}`) },
      code: Code.ResourceExhausted,
      message: /names 10001 resources.*at most 10000 .*EDGEPILOT_MAX_NAMES_PER_REQUEST.*split the change/,
    },
  ];

  it("answers each kind of garbage with its error while a good stream keeps being served", async () => {
    const good = track(openDelta(cp.xdsPort));
    good.send({ node: node("good"), typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    const r1 = await good.next();
    good.send({ typeUrl: EDS, responseNonce: r1?.nonce });
    for (const g of garbage) {
      const bad = track(openDelta(cp.xdsPort));
      bad.send({ node: node("bad"), typeUrl: CDS }); // a good request first: answered
      expect((await bad.next())?.typeUrl).toBe(CDS);
      bad.send(g.req);
      const err = await bad.ended();
      expect(err?.code, g.name).toBe(g.code);
      expect(err?.rawMessage, g.name).toMatch(g.message);
    }
    await apply(cp, [sliceEvent("reviews", ["10.4.0.2"])]);
    const pushed = await good.next();
    expect(summary([pushed!])).toEqual([`eds +${reviews.cluster}`]);
    good.send({ typeUrl: EDS, resourceNamesSubscribe: ["outbound|1||later.default.svc.cluster.local"] });
    expect((await good.next())?.removedResources).toEqual(["outbound|1||later.default.svc.cluster.local"]);
    expect(await good.ended(50)).toBeUndefined();
  });
});

describe("ADS: open streams per instance (createXdsServer limits.maxStreams, EDGEPILOT_MAX_STREAMS)", () => {
  let server: Http2Server;
  let port: number;
  const sessions = new Set<Http2Session>();
  beforeAll(async () => {
    const core = { store: createMemoryStore(), feed: createChangeFeed(() => {}) };
    const xds = createXdsServer(core, { log: () => {}, limits: { maxStreams: 1 } });
    const routes = createXdsRoutes(xds, { ads: xds.ads });
    server = createServer(connectNodeAdapter({ routes }));
    server.on("session", (s) => {
      sessions.add(s);
      s.on("close", () => sessions.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sessions) s.destroy(); // clients keep their connections open
    await closed;
  });

  it("refuses a stream over the limit with ResourceExhausted, and serves again once one closes", async () => {
    const one = track(openDelta(port));
    one.send({ node: node("one"), typeUrl: CDS });
    expect((await one.next())?.typeUrl).toBe(CDS);
    const two = track(openDelta(port));
    two.send({ node: node("two"), typeUrl: CDS });
    const err = await two.ended();
    expect(err?.code).toBe(Code.ResourceExhausted);
    expect(err?.rawMessage).toMatch(
      /already serves 1 ADS streams.*EDGEPILOT_MAX_STREAMS.*retry with backoff/,
    );
    // SotW streams count against the same limit.
    const ads = createClient(
      AggregatedDiscoveryService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
    );
    async function* oneRequest() {
      yield create(DiscoveryRequestSchema, { node: node("sotw"), typeUrl: CDS });
      await new Promise((r) => setTimeout(r, 2000));
    }
    const sotw = await (async () => {
      for await (const _ of ads.streamAggregatedResources(oneRequest())) return "answered";
      return "ended";
    })().catch((e) => ConnectError.from(e));
    expect(sotw).toBeInstanceOf(ConnectError);
    expect((sotw as ConnectError).code).toBe(Code.ResourceExhausted);
    one.close();
    let served = false;
    for (const deadline = Date.now() + 3000; !served && Date.now() < deadline; ) {
      const again = track(openDelta(port));
      again.send({ node: node("again"), typeUrl: CDS });
      served = (await again.next(500))?.typeUrl === CDS;
      again.close();
    }
    expect(served).toBe(true);
  });
});
