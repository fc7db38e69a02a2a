/**
 * GET /metrics on the Node runtime (in-process, memory store, XDS_AUTH=token) after a scripted
 * scenario: ingest a service and its endpoints (a push), an ADS client (real @grpc/grpc-js, SotW)
 * connects and ACKs, an endpoint moves (a push the stream converges on), the client NACKs, the
 * stream closes. Each scrape is parsed by a real Prometheus text-format parser and the counters
 * and histograms are checked to move as the scenario says.
 */
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeRuntime, startNodeRuntime } from "../../../functions/node/runtime.ts";
import { parseConfig } from "../../../lib/config.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { decodeChecked } from "../../support/xds-check.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { Scrape, scrapeUntil } from "./scrape.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const xdsToken = "metrics-xds-token-0123456789";
const ingestToken = "metrics-ingest-token";
const cluster = "outbound|9080||reviews.default.svc.cluster.local";
const node = {
  id: "sidecar~10.0.0.5~metrics.default~default.svc.cluster.local",
  metadata: { ISTIO_VERSION: "1.24.0", GENERATOR: "grpc" },
};
const port = { name: "grpc", port: 9080 };
const slice = (ip: string) =>
  event("MODIFIED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip, ready: true }]));

let runtime: NodeRuntime;

/** Scrapes /metrics with `token` and parses it (throws on a non-200 answer). */
async function scrape(token: string | undefined = xdsToken): Promise<Scrape> {
  const r = await fetch(`http://127.0.0.1:${runtime.port}/metrics`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}: ${text}`);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(text);
}

/** Polls `check` (a scrape each time) until it passes: pushes and closes happen a moment later. */
const eventually = (check: (s: Scrape) => void) => scrapeUntil(scrape, check);

async function ingest(events: unknown[]): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${runtime.port}/v1/events`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ingestToken}` },
    body: JSON.stringify(events),
  });
  expect(r.status).toBe(200);
}

/** A SotW ADS stream over @grpc/grpc-js with the xDS token in its metadata. */
function openAds() {
  const client = new grpc.Client(`127.0.0.1:${runtime.xdsPort}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${xdsToken}`);
  const call = client.makeBidiStreamRequest(
    "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
    (m: MessageInitShape<typeof DiscoveryRequestSchema>) =>
      Buffer.from(toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, m))),
    decodeChecked.sotw,
    md,
  );
  const queue: DiscoveryResponse[] = [];
  let wake: (() => void) | undefined;
  call.on("data", (r: DiscoveryResponse) => {
    queue.push(r);
    wake?.();
  });
  call.on("error", () => {});
  return {
    send: (m: MessageInitShape<typeof DiscoveryRequestSchema>) => call.write(m),
    async next(): Promise<DiscoveryResponse> {
      for (let i = 0; queue.length === 0; i++) {
        if (i > 100) throw new Error("no response in 2s");
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 20);
        });
      }
      return queue.shift() as DiscoveryResponse;
    },
    close() {
      call.end();
      call.cancel();
      client.close();
    },
  };
}

beforeAll(async () => {
  const parsed = parseConfig({
    PORT: "0",
    XDS_PORT: "0",
    HOST: "127.0.0.1",
    EDGEPILOT_TOKEN: ingestToken,
    XDS_AUTH: "token",
    EDGEPILOT_XDS_TOKEN: xdsToken,
    PILOT_DEBOUNCE_AFTER: "5ms",
    PILOT_SYNC_TIMEOUT: "0s",
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  runtime = await startNodeRuntime(parsed.config, { log: () => {}, shutdownGraceMs: 100 });
});

afterAll(async () => {
  await runtime?.stop();
});

describe("GET /metrics on Node", () => {
  it("refuses a read without the xDS token, and with the ingest token", async () => {
    for (const token of [undefined, ingestToken]) {
      const r = await fetch(`http://127.0.0.1:${runtime.port}/metrics`, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("counts ingest, pushes, a stream, its ACKs, a convergence and a NACK as they happen", async () => {
    const before = await scrape();
    expect(before.value("pilot_xds", { version: "1.24.0" })).toBe(0);
    expect(before.value("pilot_services")).toBe(0);
    expect(before.family("edgepilot_event_loop_lag_seconds").metrics).toHaveLength(3);

    // Ingest a service, its pods and endpoints: one batch, one full push.
    const pods = ["10.1.0.1", "10.1.0.2"].map((ip) => event("ADDED", pod("reviews", "default", ip)));
    await ingest([...pods, event("ADDED", service("reviews", "default", [port])), slice("10.1.0.1")]);
    const ingested = await eventually((s) => expect(s.value("edgepilot_pushes", { kind: "full" })).toBe(1));
    expect(ingested.value("edgepilot_ingest_batches", { call: "events" })).toBe(1);
    expect(ingested.value("pilot_k8s_reg_events", { type: "Services", event: "add" })).toBe(1);
    expect(ingested.value("pilot_k8s_reg_events", { type: "Pods", event: "add" })).toBe(2);
    expect(ingested.value("pilot_k8s_reg_events", { type: "EndpointSlice", event: "update" })).toBe(1);
    expect(ingested.value("pilot_inbound_updates", { type: "svc" })).toBe(1);
    expect(ingested.value("pilot_inbound_updates", { type: "eds" })).toBe(1);
    expect(ingested.histogram("pilot_debounce_time").count).toBe(1);
    expect(ingested.histogram("pilot_pushcontext_init_seconds").count).toBe(1);
    expect(ingested.value("pilot_services")).toBe(1);
    // The store under the core is measured: the flush read through it.
    expect(ingested.value("edgepilot_store_operations", { op: "getMany" })).toBeGreaterThan(0);
    expect(ingested.family("edgepilot_store_seconds").type).toBe("HISTOGRAM");
    expect(ingested.value("pilot_endpoint_not_ready")).toBe(0);
    expect(ingested.value("edgepilot_push_resources_changed")).toBeGreaterThan(0);

    // A proxy connects and ACKs CDS and EDS.
    const ads = openAds();
    ads.send({ node, typeUrl: CDS });
    const cds = await ads.next();
    ads.send({ typeUrl: CDS, versionInfo: cds.versionInfo, responseNonce: cds.nonce });
    ads.send({ typeUrl: EDS, resourceNames: [cluster] });
    const eds = await ads.next();
    ads.send({
      typeUrl: EDS,
      versionInfo: eds.versionInfo,
      resourceNames: [cluster],
      responseNonce: eds.nonce,
    });
    const connected = await eventually((s) => expect(s.value("edgepilot_xds_acks", { type: "eds" })).toBe(1));
    expect(connected.value("pilot_xds", { version: "1.24.0" })).toBe(1);
    expect(connected.value("edgepilot_xds_streams", { kind: "sotw" })).toBe(1);
    expect(connected.value("edgepilot_xds_acks", { type: "cds" })).toBe(1);
    expect(connected.value("pilot_xds_pushes", { type: "cds" })).toBe(1);
    expect(connected.value("pilot_xds_pushes", { type: "eds" })).toBe(1);
    expect(connected.histogram("pilot_xds_push_time", { type: "eds" }).count).toBe(1);
    expect(connected.histogram("pilot_xds_send_time").count).toBe(2);
    expect(connected.histogram("pilot_proxy_convergence_time").count).toBe(0);

    // An endpoint moves: an incremental push the stream answers (EDS only) and converges on.
    await ingest([slice("10.1.0.2")]);
    const moved = await ads.next();
    expect(moved.typeUrl).toBe(EDS);
    const pushed = await eventually((s) => expect(s.histogram("pilot_proxy_convergence_time").count).toBe(1));
    expect(pushed.value("edgepilot_pushes", { kind: "incremental" })).toBe(1);
    expect(pushed.value("pilot_xds_pushes", { type: "eds" })).toBe(2);
    expect(pushed.value("pilot_xds_pushes", { type: "cds" })).toBe(1);
    const convergence = pushed.histogram("pilot_proxy_convergence_time");
    expect(convergence.inf).toBe(1);
    expect(convergence.sum).toBeGreaterThan(0);
    expect(convergence.sum).toBeLessThan(30);
    expect(pushed.histogram("pilot_debounce_time").count).toBe(2);

    // The proxy NACKs the push; then it goes away.
    ads.send({
      typeUrl: EDS,
      versionInfo: eds.versionInfo,
      resourceNames: [cluster],
      responseNonce: moved.nonce,
      errorDetail: { code: 3, message: "rejected for the test" },
    });
    const nacked = await eventually((s) =>
      expect(s.value("pilot_total_xds_rejects", { type: "eds" })).toBe(1),
    );
    expect(nacked.value("pilot_total_xds_rejects", { type: "cds" })).toBe(0);
    expect(nacked.value("edgepilot_xds_acks", { type: "eds" })).toBe(1);
    ads.close();
    await eventually((s) => {
      expect(s.value("pilot_xds", { version: "1.24.0" })).toBe(0);
      expect(s.value("edgepilot_xds_streams", { kind: "sotw" })).toBe(0);
    });
  });
});
