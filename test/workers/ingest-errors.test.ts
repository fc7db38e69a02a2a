/**
 * What the Worker refuses: bad batches (400 naming index and field), missing or wrong tokens
 * (401), no EDGEPILOT_TOKEN at all, and a bad configuration (500). After each refusal the
 * published state is exactly what it was: nothing applied, nothing queued, no alarm armed.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { noTokenRefusal } from "../../functions/workers/app.ts";
import entry, { type Env } from "../../functions/workers/index.ts";
import events from "../fixtures/parity/events.json";
import {
  alarmAt,
  freezeClock,
  getStatus,
  ingest,
  origin,
  runAlarmsUntilIdle,
  type Status,
  testToken,
} from "./support.ts";

/** A Service no accepted batch contains: if it ever lands, a refused batch was applied. */
const details = {
  apiVersion: "v1",
  kind: "Service",
  metadata: {
    name: "details",
    namespace: "default",
    uid: "d3f1a2b4-0c5e-4f67-8a9b-1c2d3e4f5a6b",
    resourceVersion: "49001",
  },
  spec: { clusterIP: "10.96.7.7", ports: [{ name: "grpc", port: 9090, protocol: "TCP" }], type: "ClusterIP" },
};
const added = (object: unknown) => ({ type: "ADDED", object });
const { name: _dropped, ...metadataWithoutName } = details.metadata;

let baseline: Status;

beforeAll(async () => {
  freezeClock();
  expect((await ingest(events)).status).toBe(200);
  await runAlarmsUntilIdle();
  baseline = await getStatus();
  expect(baseline).toMatchObject({ pushVersion: 1, pendingPushes: 0 });
});
afterAll(() => {
  vi.useRealTimers();
});

/** Nothing applied, nothing queued, nothing armed. */
async function expectUnchanged() {
  expect(await alarmAt()).toBeNull();
  expect(await getStatus()).toEqual(baseline);
}

describe("bad batches ▶ 400 naming the event and field", () => {
  const cases: { name: string; body: string; contentType?: string; want: Record<string, unknown> }[] = [
    {
      name: "malformed JSON",
      body: `[${JSON.stringify(added(details))}, {"type": "ADDED", "object": `,
      want: { error: expect.stringMatching(/^malformed JSON/) },
    },
    {
      name: "malformed NDJSON on the second line",
      body: `${JSON.stringify(added(details))}\n{"type": "ADDED",`,
      contentType: "application/x-ndjson",
      want: { index: 1, error: expect.stringMatching(/^malformed JSON on line 2/) },
    },
    {
      name: "an unknown event type",
      body: JSON.stringify([added(details), { type: "UPSERTED", object: details }]),
      want: { index: 1, field: "type", error: expect.stringContaining('"UPSERTED"') },
    },
    {
      name: "an object without a name",
      body: JSON.stringify([added(details), added({ ...details, metadata: metadataWithoutName })]),
      want: { index: 1, field: "object.metadata.name", error: "is required" },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: 400, and the valid event before it is not applied either`, async () => {
      const res = await ingest(c.body, c.contentType ? { contentType: c.contentType } : {});
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(c.want);
      await expectUnchanged();
    });
  }
});

describe("authentication ▶ 401", () => {
  it("a missing token", async () => {
    const res = await ingest([added(details)], { token: null });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "missing bearer token" });
    await expectUnchanged();
  });

  it("a wrong token", async () => {
    const res = await ingest([added(details)], { token: `${testToken}x` });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "wrong bearer token" });
    await expectUnchanged();
  });

  it("any call when the Worker has no EDGEPILOT_TOKEN: Workers have no loopback to trust", async () => {
    const noToken: Env = { ...env, EDGEPILOT_TOKEN: undefined };
    for (const authorization of [undefined, `Bearer ${testToken}`]) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (authorization) headers.authorization = authorization;
      const request = new Request(`${origin}/v1/events`, {
        method: "POST",
        headers,
        body: JSON.stringify([added(details)]),
      });
      const res = await entry.fetch(request, noToken, createExecutionContext());
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: string };
      expect(body).toEqual({ error: noTokenRefusal });
      expect(body.error).toContain("set it (`wrangler secret put EDGEPILOT_TOKEN`");
    }
    await expectUnchanged();
  });
});

describe("a bad configuration ▶ 500 naming every bad variable", () => {
  it("refuses to serve anything half-configured", async () => {
    const bad: Env = { ...env, PILOT_DEBOUNCE_AFTER: "soon", CLUSTER_ID: "has space" };
    const res = await entry.fetch(new Request(`${origin}/ready`), bad, createExecutionContext());
    expect(res.status).toBe(500);
    const body = (await res.json()) as { errors: string[] };
    expect(body.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PILOT_DEBOUNCE_AFTER: not a duration: "soon"/),
        expect.stringMatching(/^CLUSTER_ID=has space: /),
      ]),
    );
    expect(body.errors).toHaveLength(2);
  });
});

describe("after every refusal", () => {
  it("the refused Service was never stored: sending it alone applies it", async () => {
    const res = await ingest([added(details)]);
    expect(await res.json()).toMatchObject({ applied: 1, unchanged: 0, push: { full: true } });
    await runAlarmsUntilIdle();
    const status = await getStatus();
    expect(status.pushVersion).toBe(baseline.pushVersion + 1);
    expect(Object.keys(status.versions["type.googleapis.com/envoy.config.cluster.v3.Cluster"]!)).toContain(
      "outbound|9090||details.default.svc.cluster.local",
    );
  });
});
