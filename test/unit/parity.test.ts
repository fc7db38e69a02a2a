/**
 * Golden parity, Node side: the events in test/fixtures/parity/events.json, ingested over the
 * runtime-neutral hono app into the in-memory store and debounced, publish exactly the versions
 * in versions.json. test/workers/parity.test.ts asserts the same file on workerd, so the two
 * runtimes provably publish the same bytes for the same mesh. Every published resource passes
 * Envoy's PGV rules and the set has no dangling reference (test/support/xds-check.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createIngestApp } from "../../functions/ingest.ts";
import { nodeSha256 } from "../../functions/node/sha256.ts";
import { parseConfig } from "../../lib/config.ts";
import { debounceTurn } from "../../lib/core/turn.ts";
import { publishedStatus } from "../../lib/resources/published-status.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import events from "../fixtures/parity/events.json";
import istioEvents from "../fixtures/parity/istio-events.json";
import istioVersions from "../fixtures/parity/istio-versions.json";
import serviceEntryEvents from "../fixtures/parity/service-entry-events.json";
import serviceEntryVersions from "../fixtures/parity/service-entry-versions.json";
import versions from "../fixtures/parity/versions.json";
import { assertStoreValid } from "../support/xds-check.ts";

const parsed = parseConfig({});
if (!parsed.ok) throw new Error(parsed.errors.join("; "));
const config = parsed.config;

/** Ingests `body` at `start`, then runs debounce turns on a manual clock until the queue is empty. */
async function ingestAndSettle(body: string, start: number) {
  const store = createMemoryStore();
  let clock = start;
  const now = () => clock;
  const app = createIngestApp({
    store,
    registry: config.registry,
    now,
    token: undefined,
    clusterId: config.clusterId,
    allowUnauthenticated: () => true,
    log: () => {},
  });
  const res = await app.request("/v1/events", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  let turns = 0;
  for (;;) {
    const turn = await debounceTurn({ store, config, now });
    if (turn.nextAt === null) break;
    expect(++turns, "debounce never settled").toBeLessThan(10);
    clock = Math.max(clock, turn.nextAt);
  }
  // Every published resource passes Envoy's PGV rules, and the whole mesh references nothing missing.
  expect(await assertStoreValid(store, { complete: true })).toBeGreaterThan(0);
  return publishedStatus(store);
}

const byType = (types: { typeUrl: string; versions: Record<string, string> }[]) =>
  Object.fromEntries(types.map((t) => [t.typeUrl, t.versions]));

describe("golden parity (Node)", () => {
  afterEach(() => useSyncSha256(undefined));

  it("publishes exactly the versions in versions.json, in one push", async () => {
    const status = await ingestAndSettle(JSON.stringify(events), Date.UTC(2025, 2, 14, 9, 30));
    expect(byType(status.types)).toEqual(versions);
    expect(status.pushVersion).toBe(1);
    expect(status.pendingPushes).toBe(0);
  });

  it("publishes the same versions with the Node runtime's synchronous SHA-256 as with WebCrypto", async () => {
    useSyncSha256(nodeSha256);
    const status = await ingestAndSettle(JSON.stringify(events), Date.UTC(2025, 2, 14, 9, 30));
    expect(byType(status.types)).toEqual(versions);
  });

  it("does not depend on the clock, and names what CONTRACT.md names", async () => {
    const later = await ingestAndSettle(JSON.stringify(events), Date.UTC(2031, 0, 1));
    expect(byType(later.types)).toEqual(versions);
    const names = Object.values(versions).flatMap((v) => Object.keys(v));
    expect(names).toContain("outbound|9080||reviews.default.svc.cluster.local");
    expect(names).toContain("reviews.default.svc.cluster.local:9080");
    expect(names).toContain("outbound|50051||ratings.shop.svc.cluster.local");
  });
});

describe("golden parity with VirtualService and DestinationRule (Node)", () => {
  it("publishes exactly the versions in istio-versions.json: routes (dangling ones answered UNAVAILABLE), subset clusters and assignments", async () => {
    const status = await ingestAndSettle(JSON.stringify(istioEvents), Date.UTC(2025, 2, 14, 9, 30));
    expect(byType(status.types)).toEqual(istioVersions);
    const names = Object.values(istioVersions).flatMap((v) => Object.keys(v));
    expect(names).toContain("outbound|9080|v3|reviews.default.svc.cluster.local");
    expect(names).toContain("outbound|50051|v1|ratings.shop.svc.cluster.local");
    expect(status.pushVersion).toBe(1);
  });
});

describe("golden parity with ServiceEntry and WorkloadEntry (Node)", () => {
  it("publishes exactly the versions in service-entry-versions.json: External services, STATIC and DNS clusters", async () => {
    const body = JSON.stringify([...istioEvents, ...serviceEntryEvents]);
    const status = await ingestAndSettle(body, Date.UTC(2025, 2, 14, 9, 30));
    if (process.env.WRITE_GOLDEN) console.log(`GOLDEN${JSON.stringify(byType(status.types))}`);
    expect(byType(status.types)).toEqual(serviceEntryVersions);
    const names = Object.values(serviceEntryVersions).flatMap((v) => Object.keys(v));
    expect(names).toContain("outbound|7070||payments-alias.shop.mesh");
    expect(names).toContain("outbound|50051||geo.example.com");
  });
});
