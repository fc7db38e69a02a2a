/**
 * Golden parity, Workers side: the Worker on workerd (ingest forwarded into the SQLite MeshStore,
 * debounce on its alarm, status over Connect JSON) publishes exactly the versions in
 * test/fixtures/parity/versions.json, the file test/unit/parity.test.ts holds the Node path to.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import events from "../fixtures/parity/events.json";
import istioEvents from "../fixtures/parity/istio-events.json";
import istioVersions from "../fixtures/parity/istio-versions.json";
import serviceEntryEvents from "../fixtures/parity/service-entry-events.json";
import serviceEntryVersions from "../fixtures/parity/service-entry-versions.json";
import versions from "../fixtures/parity/versions.json";
import { freezeClock, getStatus, ingest, runAlarmsUntilIdle } from "./support.ts";

beforeAll(() => {
  freezeClock();
});
afterAll(() => {
  vi.useRealTimers();
});

describe("golden parity (Workers)", () => {
  it("publishes exactly the versions Node publishes for the same events, in one push", async () => {
    const res = await ingest(events);
    expect(res.status, await res.clone().text()).toBe(200);
    await runAlarmsUntilIdle();
    const status = await getStatus();
    expect(status.versions).toEqual(versions);
    expect(status).toMatchObject({ pushVersion: 1, pendingPushes: 0 });
  });

  it("takes the same batch as NDJSON with the same result: nothing changes, nothing is queued", async () => {
    const ndjson = events.map((e) => JSON.stringify(e)).join("\n");
    const res = await ingest(ndjson, { contentType: "application/x-ndjson" });
    expect(await res.json()).toMatchObject({
      events: events.length,
      applied: 0,
      stale: events.length,
      push: null,
    });
    expect(await runAlarmsUntilIdle()).toBe(0);
    expect((await getStatus()).versions).toEqual(versions);
  });
});

describe("golden parity with VirtualService and DestinationRule (Workers)", () => {
  it("publishes exactly the versions Node publishes for the same configs", async () => {
    const res = await ingest(istioEvents);
    expect(res.status, await res.clone().text()).toBe(200);
    // The dangling routes (a host with no service, a split's share to a subset no rule defines)
    // are reported as Node reports them, and published answered UNAVAILABLE (same versions).
    expect(((await res.json()) as { dangling: string[] }).dangling).toEqual([
      "VirtualService default/reviews: spec.http[3]: ghost.default.svc.cluster.local: no service has host ghost.default.svc.cluster.local",
      "VirtualService default/reviews: spec.http[4]: reviews.default.svc.cluster.local subset v9: no DestinationRule for reviews.default.svc.cluster.local defines subset v9",
    ]);
    await runAlarmsUntilIdle();
    expect((await getStatus()).versions).toEqual(istioVersions);
  });
});

describe("golden parity with ServiceEntry and WorkloadEntry (Workers)", () => {
  it("publishes exactly the versions Node publishes for the same entries", async () => {
    const res = await ingest(serviceEntryEvents);
    expect(res.status, await res.clone().text()).toBe(200);
    await runAlarmsUntilIdle();
    expect((await getStatus()).versions).toEqual(serviceEntryVersions);
  });
});
