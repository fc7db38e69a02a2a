/**
 * A Poll NACK inside the MeshStore Durable Object (workerd) is logged through the object's log:
 * one istiod-format line at warn in the xds scope (console.warn, so Workers Logs records the
 * level), the line the Node host writes for a Poll NACK (lib/xds/poll-nack.ts), and once per
 * distinct NACK.
 */
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { endpointSlice, event, pod, service } from "../e2e/support/kube.ts";
import { workerTransport } from "./poll-support.ts";
import { freezeClock, ingest, runAlarmsUntilIdle, TypeUrl } from "./support.ts";

const cluster = "outbound|9080||ratings.default.svc.cluster.local";
const node = {
  id: "sidecar~10.0.0.6~nack.default~default.svc.cluster.local",
  metadata: { ISTIO_VERSION: "1.24.0", GENERATOR: "grpc" },
};
const port = { name: "grpc", port: 9080 };

let warn: MockInstance<typeof console.warn>;
let log: MockInstance<typeof console.log>;
const lines = (spy: MockInstance<(...args: unknown[]) => void>) => spy.mock.calls.map((c) => String(c[0]));

beforeAll(() => {
  freezeClock();
  warn = vi.spyOn(console, "warn");
  log = vi.spyOn(console, "log");
});
afterAll(() => {
  warn.mockRestore();
  log.mockRestore();
  vi.useRealTimers();
});

describe("a Poll NACK in the MeshStore", () => {
  it("is logged once, at warn, in the Node host's Poll NACK line", async () => {
    const res = await ingest([
      event("ADDED", pod("ratings", "default", "10.2.0.1")),
      event("ADDED", service("ratings", "default", [port])),
      event(
        "ADDED",
        endpointSlice("ratings-1", "ratings", "default", port, [{ ip: "10.2.0.1", ready: true }]),
      ),
    ]);
    expect(res.status, await res.text()).toBe(200);
    await runAlarmsUntilIdle();

    const client = createClient(DeltaPollService, workerTransport(true));
    const nack = {
      node,
      typeUrl: TypeUrl.endpoint,
      resourceNamesSubscribe: [cluster],
      errorDetail: { code: 13, message: "rejected for the test" },
    };
    // The same NACK twice: the second is a repeat, worth no line.
    for (let i = 0; i < 2; i++) {
      const answer = await client.poll({ request: nack });
      expect(answer.resources.map((r) => r.name)).toEqual([cluster]);
    }

    const nacked = (l: string) => l.includes(" NACKed ");
    // istiod's text line: time, level, scope (xds: lines are istiod's ads scope), message.
    const fields = lines(warn)
      .filter(nacked)
      .map((l) => l.split("\t"));
    expect(fields).toEqual([
      [
        expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        "warn",
        "ads",
        `xds: "${node.id}" NACKed "${TypeUrl.endpoint}" (kept nothing, over Poll/Watch): "rejected for the test"`,
      ],
    ]);
    // Nothing bypasses the log: no bare line on console.log.
    expect(lines(log).filter(nacked)).toEqual([]);
  });
});
