/**
 * Envoy sidecar resources end to end through the real Node runtime: a raw ADS client posing as the
 * bookinfo productpage sidecar (Istio node id and metadata) after a bookinfo-like mesh was ingested
 * through the real ingest POST. Delta and SotW each receive the whole sidecar set (every resource
 * checked against Envoy's PGV rules by the clients, and cross-referenced: every RDS name served,
 * every cluster named exists, every EDS cluster has its assignment); a VirtualService and a
 * DestinationRule show up as subset clusters and a weighted route; one endpoint change is one
 * ClusterLoadAssignment; a GENERATOR=grpc proxy on the same server keeps the proxyless set; a
 * Connect Poll as the sidecar gets the versions ADS sent.
 */
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { DeltaPollService } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import type { Cluster } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { destinationRule, virtualService } from "../../unit/ingest/support/istio.ts";
import { type DeltaStream, openDelta } from "../delta/delta-client.ts";
import { apply } from "../delta/mesh.ts";
import { transports } from "../poll/support.ts";
import { openAds } from "../support/ads-client.ts";
import { podName } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import {
  bookinfoEvents,
  decoded,
  detailsScaled,
  edsNames,
  nameOf,
  privateService,
  productpageNode,
  rdsNames,
  reviewsScaled,
  sidecarNode,
} from "./bookinfo-mesh.ts";
import { holder, subscribeAll } from "./delta-holder.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS, route: RDS } = TypeUrl;
const host = (name: string) => `${name}.default.svc.cluster.local`;
const reviews = `outbound|9080||${host("reviews")}`;

let cp: RunningControlPlane;
const streams: { close(): void }[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  await apply(cp, bookinfoEvents());
});
afterAll(async () => {
  for (const s of streams) s.close();
  await cp?.stop();
});

describe("the productpage sidecar over Delta ADS", () => {
  let d: DeltaStream;
  let h: ReturnType<typeof holder>;

  it("receives the whole sidecar set, every resource valid and every reference served", async () => {
    d = openDelta(cp.xdsPort);
    streams.push(d);
    h = holder(d);
    d.send({ typeUrl: CDS, node: productpageNode() });
    d.send({ typeUrl: LDS });
    await h.take();
    await subscribeAll(d, h);
    const clusters = h.names(CDS);
    for (const name of ["reviews", "ratings", "details", "productpage"])
      expect(clusters).toContain(`outbound|9080||${host(name)}`);
    expect(clusters).toEqual(
      expect.arrayContaining([
        "BlackHoleCluster",
        "PassthroughCluster",
        "InboundPassthroughCluster",
        "inbound|9080||",
      ]),
    );
    expect(h.names(LDS)).toEqual(
      expect.arrayContaining(["virtualOutbound", "virtualInbound", "0.0.0.0_9080"]),
    );
    expect(h.names(EDS)).toEqual(edsNames(h.clusters().values()));
    expect(h.names(RDS)).toEqual(["9080"]);
    const vhosts = h.routes().get("9080")?.virtualHosts ?? [];
    expect(vhosts.map((v) => v.name)).toEqual([
      `${host("details")}:9080`,
      `${host("productpage")}:9080`,
      `${host("ratings")}:9080`,
      `${host("reviews")}:9080`,
      "allow_any",
    ]);
    expect(vhosts[3]?.domains).toEqual([
      host("reviews"),
      "reviews",
      "reviews.default.svc",
      "reviews.default",
      "10.96.0.12",
    ]);
    expect(d.dangling()).toEqual([]);
  });

  it("shows a VirtualService and DestinationRule as subset clusters and a weighted route", async () => {
    await apply(cp, [
      {
        type: "ADDED",
        object: destinationRule(
          "reviews",
          [
            { name: "v1", labels: { version: "v1" } },
            { name: "v2", labels: { version: "v2" } },
          ],
          { resourceVersion: "2000", spec: { trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } } },
        ),
      },
      {
        type: "ADDED",
        object: virtualService(
          "reviews",
          {
            http: [
              {
                route: [
                  { destination: { host: "reviews", subset: "v1" }, weight: 80 },
                  { destination: { host: "reviews", subset: "v2" }, weight: 20 },
                ],
              },
            ],
          },
          { resourceVersion: "2001" },
        ),
      },
    ]);
    await h.take();
    await subscribeAll(d, h);
    expect(h.names(CDS)).toEqual(
      expect.arrayContaining([`outbound|9080|v1|${host("reviews")}`, `outbound|9080|v2|${host("reviews")}`]),
    );
    expect(h.names(EDS)).toEqual(
      expect.arrayContaining([`outbound|9080|v1|${host("reviews")}`, `outbound|9080|v2|${host("reviews")}`]),
    );
    const vh = h
      .routes()
      .get("9080")
      ?.virtualHosts.find((v) => v.name === `${host("reviews")}:9080`);
    const action = vh?.routes[0]?.action;
    const weighted = action?.case === "route" ? action.value.clusterSpecifier : undefined;
    expect(weighted?.case).toBe("weightedClusters");
    if (weighted?.case === "weightedClusters")
      expect(weighted.value.clusters.map((c) => [c.name, c.weight?.valueOf()])).toEqual([
        [`outbound|9080|v1|${host("reviews")}`, 80],
        [`outbound|9080|v2|${host("reviews")}`, 20],
      ]);
    expect(d.dangling()).toEqual([]);
  });

  it("gets exactly one ClusterLoadAssignment for one endpoint change", async () => {
    const before = { cds: h.names(CDS), lds: h.names(LDS) };
    await apply(cp, reviewsScaled());
    const rs = await h.take();
    expect(rs.map((r) => [r.typeUrl, r.resources.map((x) => x.name), r.removedResources])).toEqual([
      [EDS, [reviews], []],
    ]);
    expect({ cds: h.names(CDS), lds: h.names(LDS) }).toEqual(before);
  });

  it("re-reads on a push of clusters and listeners it cannot see, and is sent nothing", async () => {
    const before = { cds: d.holds(CDS), lds: d.holds(LDS), rds: d.holds(RDS) };
    // New clusters and listeners are published (a Full push), but not exported to default.
    await apply(cp, privateService());
    expect(await h.take()).toEqual([]);
    expect({ cds: d.holds(CDS), lds: d.holds(LDS), rds: d.holds(RDS) }).toEqual(before);
  });

  it("gets a DestinationRule change only sidecars reflect at once; a proxyless client is sent nothing", async () => {
    const g = openDelta(cp.xdsPort);
    streams.push(g);
    const gh = holder(g);
    g.send({ typeUrl: CDS, node: productpageNode("grpc") });
    g.send({ typeUrl: LDS });
    await gh.take();
    expect(gh.names(CDS)).toContain(reviews);
    const before = d.holds(CDS);
    // SIMPLE TLS is no field of a proxyless cluster (Istio's grpc generator takes ISTIO_MUTUAL
    // only): nothing published changes, yet the Full push is announced (apply waits for the push
    // version to move) as a refresh.
    await apply(cp, [
      {
        type: "MODIFIED",
        object: destinationRule(
          "reviews",
          [
            { name: "v1", labels: { version: "v1" } },
            { name: "v2", labels: { version: "v2" } },
          ],
          {
            resourceVersion: "2002",
            spec: {
              trafficPolicy: {
                loadBalancer: { simple: "ROUND_ROBIN" },
                tls: { mode: "SIMPLE" },
              },
            },
          },
        ),
      },
    ]);
    const rs = await h.take();
    const reviewsClusters = ["", "v1", "v2"].map((s) => `outbound|9080|${s}|${host("reviews")}`).sort();
    expect(rs.map((r) => [r.typeUrl, r.resources.map((x) => x.name).sort(), r.removedResources])).toEqual([
      [CDS, reviewsClusters, []],
    ]);
    const after = d.holds(CDS);
    for (const name of reviewsClusters) expect(after.get(name)).not.toBe(before.get(name));
    expect(h.clusters().get(reviews)?.transportSocket?.name).toBe("envoy.transport_sockets.tls");
    expect(await gh.take()).toEqual([]);
    expect(d.dangling()).toEqual([]);
  });

  it("a sidecar whose own endpoint appears (an endpoint-only push) gets its inbound side", async () => {
    const ip = "10.1.0.16";
    const n = openDelta(cp.xdsPort);
    streams.push(n);
    const nh = holder(n);
    n.send({ typeUrl: CDS, node: sidecarNode("details", podName("details", ip), ip) });
    n.send({ typeUrl: LDS });
    await nh.take();
    expect(nh.names(CDS)).not.toContain("inbound|9080||");
    await apply(cp, detailsScaled(ip));
    const rs = await nh.take();
    expect(rs.map((r) => r.typeUrl)).toEqual([CDS, LDS]);
    expect(nh.names(CDS)).toContain("inbound|9080||");
    const inbound = nh.listeners().get("virtualInbound");
    expect(inbound?.filterChains.map((c) => c.name)).toContain("0.0.0.0_9080");
  });

  it("leaves a GENERATOR=grpc proxy on the same server the proxyless set", async () => {
    const g = openDelta(cp.xdsPort);
    streams.push(g);
    const gh = holder(g);
    g.send({ typeUrl: CDS, node: productpageNode("grpc") });
    g.send({ typeUrl: LDS });
    await gh.take();
    expect(gh.names(CDS)).toContain(reviews);
    expect(gh.names(CDS)).not.toContain("BlackHoleCluster");
    expect(gh.names(LDS)).toContain(`${host("reviews")}:9080`);
    expect(gh.names(LDS)).not.toContain("virtualOutbound");
  });

  it("gets over a Connect Poll the versions ADS sent", async () => {
    const poll = createClient(DeltaPollService, transports(cp)["h2c binary"]!).poll;
    for (const typeUrl of [CDS, LDS]) {
      const polled = await poll({ request: { typeUrl, node: productpageNode() } });
      expect(new Map(polled.resources.map((r) => [r.name, r.version])), `Poll ${typeUrl}`).toEqual(
        d.holds(typeUrl),
      );
    }
    const rds = await poll({
      request: { typeUrl: RDS, node: productpageNode(), resourceNamesSubscribe: ["9080"] },
    });
    expect(rds.resources.map((r) => [r.name, r.version])).toEqual([...d.holds(RDS)]);
  });
});

describe("the productpage sidecar over SotW ADS", () => {
  it("receives the same set as over Delta, valid and complete", async () => {
    const s = openAds(cp.xdsPort);
    streams.push(s);
    const got = new Map<string, Map<string, Uint8Array>>();
    const takeAll = async () => {
      for (let r = await s.next(500); r; r = await s.next(300)) {
        const m = new Map<string, Uint8Array>();
        for (const a of r.resources) m.set(nameOf(r.typeUrl, a.value), a.value);
        got.set(
          r.typeUrl,
          r.typeUrl === CDS || r.typeUrl === LDS ? m : new Map([...(got.get(r.typeUrl) ?? []), ...m]),
        );
        s.send({
          typeUrl: r.typeUrl,
          versionInfo: r.versionInfo,
          responseNonce: r.nonce,
          resourceNames: want.get(r.typeUrl) ?? [],
        });
      }
    };
    const want = new Map<string, string[]>();
    s.send({ typeUrl: CDS, node: productpageNode() });
    s.send({ typeUrl: LDS });
    await takeAll();
    want.set(EDS, edsNames((decoded(CDS, got.get(CDS) ?? new Map()) as Map<string, Cluster>).values()));
    want.set(RDS, rdsNames((decoded(LDS, got.get(LDS) ?? new Map()) as Map<string, Listener>).values()));
    s.send({ typeUrl: EDS, resourceNames: want.get(EDS) });
    s.send({ typeUrl: RDS, resourceNames: want.get(RDS) });
    await takeAll();
    expect(s.error()).toBe("");
    expect([...(got.get(CDS)?.keys() ?? [])].sort()).toEqual(
      expect.arrayContaining([
        "BlackHoleCluster",
        "InboundPassthroughCluster",
        "inbound|9080||",
        `outbound|9080|v1|${host("reviews")}`,
      ]),
    );
    expect([...(got.get(LDS)?.keys() ?? [])].sort()).toEqual(
      expect.arrayContaining(["0.0.0.0_9080", "virtualInbound", "virtualOutbound"]),
    );
    expect(got.get(EDS)?.size).toBe(want.get(EDS)?.length);
    expect([...(got.get(RDS)?.keys() ?? [])]).toEqual(["9080"]);
    expect(s.dangling()).toEqual([]);
  });
});

describe("the productpage sidecar behind the agent", () => {
  let agent: RunningAgent | undefined;
  afterAll(async () => {
    await agent?.stop();
  });

  it("gets the sidecar set the upstream generates for its node, valid and complete", async () => {
    const lines: string[] = [];
    agent = await startAgent(
      {
        upstream: `http://127.0.0.1:${cp.xdsPort}`,
        tokenFile: undefined,
        namespace: "default",
        port: 0,
        socket: undefined,
        readyPort: 0,
      },
      { log: (l) => lines.push(l) },
    );
    const d = openDelta(agent.port);
    streams.push(d);
    const h = holder(d);
    d.send({ typeUrl: CDS, node: productpageNode() });
    d.send({ typeUrl: LDS });
    await h.take();
    await subscribeAll(d, h);
    expect(h.names(LDS), lines.join("\n")).toEqual(
      expect.arrayContaining(["virtualInbound", "virtualOutbound", "0.0.0.0_9080"]),
    );
    expect(h.names(CDS)).toEqual(expect.arrayContaining(["BlackHoleCluster", "inbound|9080||", reviews]));
    expect(h.names(RDS)).toEqual(["9080"]);
    expect(d.dangling()).toEqual([]);
  });
});
