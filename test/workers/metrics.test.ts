/**
 * GET /metrics on the Worker (workerd): the MeshStore's core metrics, fetched by the Worker in one
 * call, after a scripted scenario: ingest a service and its endpoints (a push run by the object's
 * alarm), a Watch opens (DeltaPollService through the Worker into the object) and is answered, an
 * endpoint moves (a push the Watch converges on), a Poll NACKs, the Watch ends. Each scrape is
 * parsed by a real Prometheus text-format parser; a read without the xDS token is refused.
 */
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { Scrape, scrapeUntil } from "../e2e/metrics/scrape.ts";
import { endpointSlice, event, pod, service } from "../e2e/support/kube.ts";
import { workerTransport } from "./poll-support.ts";
import { freezeClock, ingest, runAlarmsUntilIdle, TypeUrl, worker, xdsAuth } from "./support.ts";

const cluster = "outbound|9080||reviews.default.svc.cluster.local";
const node = {
  id: "sidecar~10.0.0.5~metrics.default~default.svc.cluster.local",
  metadata: { ISTIO_VERSION: "1.24.0", GENERATOR: "grpc" },
};
const port = { name: "grpc", port: 9080 };
const slice = (ip: string) =>
  event("MODIFIED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip, ready: true }]));

async function scrape(): Promise<Scrape> {
  const r = await worker("/metrics", { headers: xdsAuth });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Scrape(text);
}

async function applied(events: unknown[]): Promise<void> {
  const r = await ingest(events);
  expect(r.status, await r.text()).toBe(200);
  await runAlarmsUntilIdle();
}

/** Scrapes until `check` passes: a Watch's end reaches the object a moment after the abort. */
const eventually = (check: (s: Scrape) => void) => scrapeUntil(scrape, check, 50);

beforeAll(() => {
  freezeClock();
});
afterAll(() => {
  vi.useRealTimers();
});

describe("GET /metrics on the Worker", () => {
  it("refuses a read without the xDS token, and with the ingest token", async () => {
    const refused: Record<string, string>[] = [{}, { authorization: "Bearer workers-test-token" }];
    for (const headers of refused) {
      const r = await worker("/metrics", { headers });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("counts ingest, pushes, a Watch, a convergence and a NACK in the MeshStore", async () => {
    const before = await scrape();
    expect(before.value("edgepilot_pushes", { kind: "full" })).toBe(0);
    expect(before.value("pilot_xds", { version: "1.24.0" })).toBe(0);

    const pods = ["10.1.0.1", "10.1.0.2"].map((ip) => event("ADDED", pod("reviews", "default", ip)));
    await applied([...pods, event("ADDED", service("reviews", "default", [port])), slice("10.1.0.1")]);
    const ingested = await scrape();
    expect(ingested.value("edgepilot_pushes", { kind: "full" })).toBe(1);
    expect(ingested.value("edgepilot_ingest_batches", { call: "events" })).toBe(1);
    expect(ingested.value("pilot_k8s_reg_events", { type: "Services", event: "add" })).toBe(1);
    expect(ingested.value("pilot_k8s_reg_events", { type: "Pods", event: "add" })).toBe(2);
    expect(ingested.value("pilot_inbound_updates", { type: "eds" })).toBe(1);
    expect(ingested.histogram("pilot_debounce_time").count).toBe(1);
    expect(ingested.histogram("pilot_pushcontext_init_seconds").count).toBe(1);
    expect(ingested.value("pilot_services")).toBe(1);
    // The store under the core is measured: the flush read through it.
    expect(ingested.value("edgepilot_store_operations", { op: "getMany" })).toBeGreaterThan(0);
    expect(ingested.family("edgepilot_store_seconds").type).toBe("HISTOGRAM");

    // A Watch opens and gets its first answer.
    const client = createClient(DeltaPollService, workerTransport(true));
    const abort = new AbortController();
    const watch = client
      .watch(
        { request: { node, typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: [cluster] } },
        { signal: abort.signal },
      )
      [Symbol.asyncIterator]();
    const first = await watch.next();
    expect(first.value?.resources).toHaveLength(1);
    const watching = await scrape();
    expect(watching.value("pilot_xds", { version: "1.24.0" })).toBe(1);
    expect(watching.value("edgepilot_xds_streams", { kind: "watch" })).toBe(1);
    expect(watching.value("pilot_xds_pushes", { type: "eds" })).toBe(1);

    // An endpoint moves: the Watch gets the delta and converges.
    await applied([slice("10.1.0.2")]);
    const moved = await watch.next();
    expect(moved.value?.resources).toHaveLength(1);
    const pushed = await eventually((s) => expect(s.histogram("pilot_proxy_convergence_time").count).toBe(1));
    expect(pushed.value("edgepilot_pushes", { kind: "incremental" })).toBe(1);
    expect(pushed.value("pilot_xds_pushes", { type: "eds" })).toBe(2);
    expect(pushed.histogram("pilot_xds_push_time", { type: "eds" }).count).toBe(2);

    // A Poll NACKs what it holds.
    await client.poll({
      request: {
        node,
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: [cluster],
        errorDetail: { code: 13, message: "rejected for the test" },
      },
    });
    const nacked = await scrape();
    expect(nacked.value("pilot_total_xds_rejects", { type: "eds" })).toBe(1);
    expect(nacked.value("pilot_total_xds_rejects", { type: "cds" })).toBe(0);

    abort.abort();
    await watch.return?.();
    await eventually((s) => expect(s.value("edgepilot_xds_streams", { kind: "watch" })).toBe(0));
  });
});
