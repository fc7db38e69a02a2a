/**
 * Durable Object calls per ingest batch on workerd: each batch (1, 13 or 2,000 watch events, a
 * resync, an AdmissionReview) costs the MeshStore ONE call (the Worker's forward), whatever its
 * size; a refused call costs none. Counted by the object itself (`calls`: every entry point, i.e.
 * fetch, each store RPC, kick and alarm), read with runInDurableObject, which is not an entry
 * call. And two ingests from two isolates at once apply in one order: the newer resourceVersion
 * of an object wins, whichever batch arrived or finished first. Run against the previous path
 * (ingest in the Worker, one RPC per store operation) the same counter read 17, 142, 24,008, 4,010
 * and 13 calls for these batches, and the older version won the race.
 */
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { noTokenRefusal } from "../../functions/workers/app.ts";
import entry from "../../functions/workers/index.ts";
import { notForwardedRefusal } from "../../functions/workers/ingest-host.ts";
import type { ObjectRecord } from "../../lib/ingest/objects.ts";
import { keys } from "../../lib/store/keys.ts";
import { Scrape } from "../e2e/metrics/scrape.ts";
import { endpointSlice, event, service } from "../e2e/support/kube.ts";
import events from "../fixtures/parity/events.json";
import {
  freezeClock,
  getStatus,
  ingest,
  mesh,
  origin,
  runAlarmsUntilIdle,
  TypeUrl,
  testToken,
  worker,
  xdsAuth,
} from "./support.ts";

const requests = "edgepilot_durable_object_requests";

/** Entry calls the MeshStore has served so far. */
const calls = () => runInDurableObject(mesh(), (object) => object.calls);

/** The calls `send` cost the object, and its answer (which must be 200). */
async function counted(
  send: () => Promise<Response>,
): Promise<{ calls: number; body: Record<string, unknown> }> {
  const before = await calls();
  const res = await send();
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { calls: (await calls()) - before, body: JSON.parse(text) as Record<string, unknown> };
}

const post = (path: string, body: unknown, token: string | null = testToken) =>
  worker(path, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token !== null && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });

/** `n` Services of one port in namespace `ns`, each with a slice of two endpoints: 2n events. */
function servicesWithSlices(n: number, ns: string) {
  const port = { name: "http", port: 8080 };
  return Array.from({ length: n }, (_, i) => [
    event("ADDED", service(`svc-${i}`, ns, [port])),
    event(
      "ADDED",
      endpointSlice(`svc-${i}-1`, `svc-${i}`, ns, port, [
        { ip: `10.9.${i >> 8}.${i & 255}`, ready: true },
        { ip: `10.8.${i >> 8}.${i & 255}`, ready: true },
      ]),
    ),
  ]).flat();
}

const review = (name: string) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    operation: "CREATE",
    object: service(name, "admitted", [{ name: "http", port: 80 }]),
  },
});

beforeAll(() => {
  freezeClock();
});
afterAll(() => {
  vi.useRealTimers();
});

describe("the counter", () => {
  it("counts a stub call and does not count its own reading", async () => {
    const before = await calls();
    expect(await calls()).toBe(before);
    await mesh().kick();
    expect(await calls()).toBe(before + 1);
    // A read path goes over store RPC: each is an entry call, and all are counted.
    await getStatus();
    expect(await calls()).toBeGreaterThan(before + 2);
  });
});

describe("Durable Object calls per ingest batch ▶ one, whatever its size", () => {
  const cases: { name: string; send: () => Promise<Response>; want: Record<string, unknown> }[] = [
    {
      name: "1 watch event",
      send: () => ingest([event("ADDED", service("single", "one", [{ name: "http", port: 80 }]))]),
      want: { events: 1, applied: 1 },
    },
    {
      name: "13 watch events (the parity fixture)",
      send: () => ingest(events),
      want: { events: 13, applied: 13 },
    },
    {
      name: "2,000 watch events",
      send: () => ingest(servicesWithSlices(1000, "big")),
      want: { events: 2000, applied: 2000 },
    },
    {
      name: "a resync of 500 Services",
      send: () =>
        post("/v1/resync?kind=Service&cluster=east", {
          apiVersion: "v1",
          kind: "ServiceList",
          metadata: { resourceVersion: "99999" },
          items: Array.from({ length: 500 }, (_, i) =>
            service(`svc-${i}`, "listed", [{ name: "http", port: 8080 }]),
          ),
        }),
      want: { cluster: "east", events: 500, applied: 500 },
    },
    {
      name: "an AdmissionReview",
      send: () => post("/v1/admission", review("admitted")),
      want: { response: expect.objectContaining({ allowed: true }) },
    },
    {
      name: "an AdmissionReview with the cluster in the path",
      send: () => post("/v1/admission/east", review("admitted-east")),
      want: { response: expect.objectContaining({ allowed: true }) },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: 1 call`, async () => {
      const { calls, body } = await counted(c.send);
      expect(body).toMatchObject(c.want);
      expect(calls).toBeLessThanOrEqual(2);
      expect(calls).toBe(1);
    });
  }

  it("GET /metrics says the same: edgepilot_durable_object_requests{entry} counts each entry, a batch is one fetch", async () => {
    const scrape = async () => {
      const r = await worker("/metrics", { headers: xdsAuth });
      expect(r.status).toBe(200);
      return new Scrape(await r.text());
    };
    const entries = ["fetch", "store", "kick", "alarm", "metrics"];
    const sum = (s: Scrape) => entries.reduce((n, entry) => n + s.value(requests, { entry }), 0);
    const before = await scrape();
    const objectBefore = await calls();
    const { calls: used } = await counted(() => ingest(servicesWithSlices(250, "scraped")));
    expect(used).toBe(1);
    const after = await scrape();
    const value = (s: Scrape, entry: string) => s.value(requests, { entry });
    expect(value(after, "fetch") - value(before, "fetch")).toBe(1);
    expect(value(after, "store") - value(before, "store")).toBe(0);
    expect(value(after, "metrics") - value(before, "metrics")).toBe(1);
    // Every call the object counted is in the exposition (the scrape itself included).
    expect(sum(after) - sum(before)).toBe((await calls()) - objectBefore);
  });

  it("the batches were applied, pushed and served", async () => {
    await runAlarmsUntilIdle();
    const clusters = Object.keys((await getStatus()).versions[TypeUrl.cluster] ?? {});
    for (const name of [
      "outbound|80||single.one.svc.cluster.local",
      "outbound|8080||svc-999.big.svc.cluster.local",
      "outbound|8080||svc-499.listed.svc.cluster.local",
      "outbound|80||admitted.admitted.svc.cluster.local",
    ])
      expect(clusters).toContain(name);
  });

  it("a bad cluster (400) and a body over 32 MiB (413): answered by the object, with the instance, one call each", async () => {
    const instance = ((await (await worker("/ready")).json()) as { instance: string }).instance;
    const sends: [() => Promise<Response>, number, string][] = [
      [() => post("/v1/events?cluster=has%20space", []), 400, 'cluster "has space": '],
      [() => ingest(" ".repeat(32 * 1024 * 1024 + 1)), 413, "body over 33554432 bytes"],
    ];
    for (const [send, status, error] of sends) {
      const before = await calls();
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get("x-edgepilot-instance")).toBe(instance);
      expect(((await res.json()) as { error: string }).error).toContain(error);
      expect((await calls()) - before).toBe(1);
    }
  });

  it("a refused call (401) never reaches the object", async () => {
    const before = await calls();
    for (const token of [null, `${testToken}x`]) {
      const res = await post("/v1/events", [event("ADDED", service("refused", "one", []))], token);
      expect(res.status).toBe(401);
    }
    const noToken = { ...env, EDGEPILOT_TOKEN: undefined };
    const res = await entry.fetch(
      new Request(`${origin}/v1/resync?kind=Service`, { method: "POST", body: "{}" }),
      noToken,
      createExecutionContext(),
    );
    expect(await res.json()).toEqual({ error: noTokenRefusal });
    expect(await calls()).toBe(before);
  });

  it("the object refuses an ingest call that did not come through the Worker", async () => {
    for (const identity of [undefined, '{"method":"token","subject":"EDGEPILOT_XDS_TOKEN"}', "{"]) {
      const headers: Record<string, string> = {
        "content-type": "application/json",
        authorization: `Bearer ${testToken}`,
      };
      if (identity !== undefined) headers["x-edgepilot-identity"] = identity;
      const res = await mesh().fetch(
        new Request(`${origin}/v1/events`, {
          method: "POST",
          headers,
          body: JSON.stringify([event("ADDED", service("sneaked", "one", [{ name: "http", port: 80 }]))]),
        }),
      );
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: notForwardedRefusal });
    }
    const sneaked = await runInDurableObject(mesh(), (o) =>
      o.store.get(keys.object("Kubernetes", "Service", "one", "sneaked")),
    );
    expect(sneaked).toBeUndefined();
  });
});

describe("two isolates ingesting at once", () => {
  it("apply in one order: the newer resourceVersion wins whichever batch lands last", async () => {
    const port = (n: number) => [{ name: "http", port: n }];
    const older = { ...service("raced", "race", port(9090)) };
    older.metadata = { ...older.metadata, resourceVersion: "500100" };
    const newer = { ...service("raced", "race", port(9091)) };
    newer.metadata = { ...newer.metadata, resourceVersion: "500101" };
    // The older version first in a long batch (read early, committed late), the newer alone.
    const long = [event("ADDED", older), ...servicesWithSlices(150, "filler")];
    const send = (batch: unknown[]) =>
      // Each call gets its own env object, so its own Worker app: as two isolates would.
      entry.fetch(
        new Request(`${origin}/v1/events`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${testToken}` },
          body: JSON.stringify(batch),
        }),
        { ...env },
        createExecutionContext(),
      );
    const answers = await Promise.all([send(long), send([event("ADDED", newer)])]);
    const [a, b] = (await Promise.all(answers.map((r) => r.json()))) as { applied: number; stale: number }[];
    expect(b).toMatchObject({ applied: 1, stale: 0 });
    // The long batch applied every event but maybe the raced one, which was stale if it came second.
    expect(a && a.applied + a.stale).toBe(long.length);
    const record = await runInDurableObject(mesh(), (o) =>
      o.store.get<ObjectRecord>(keys.object("Kubernetes", "Service", "race", "raced")),
    );
    expect(record?.value.resourceVersion).toBe("500101");
    await runAlarmsUntilIdle();
    const clusters = Object.keys((await getStatus()).versions[TypeUrl.cluster] ?? {});
    expect(clusters).toContain("outbound|9091||raced.race.svc.cluster.local");
    expect(clusters).not.toContain("outbound|9090||raced.race.svc.cluster.local");
  });
});
