/**
 * Ingest never starves serving: while the real Node runtime (in-process, real HTTP and gRPC)
 * applies one 100k-event batch, a 5 ms timer keeps ticking and `/ready` and Envoy's FetchClusters
 * keep answering. Before pacing, such a batch held the event loop for 14-22 s.
 *
 * This test is slow on purpose (a 100k-event batch is what the issue names; ~35 s of CPU) and is
 * the one in the suite that is. Bounds, and why: the loop's busiest gap (the part of a gap this
 * process spent running, see test/bench/ingest-stall.ts) must stay under 200 ms: the pace yields
 * every 10 ms, one item or one GC pause comes on top, and this 2-core machine runs several suites
 * at once. The wall-clock gap also holds time spent waiting for a core under that load, so it is
 * bounded at 2 s, an order of magnitude under the freeze it replaces. `npm run bench` prints the figures.
 */
import { describe, expect, it } from "vitest";
import { largeBatch, measureIngestStall } from "../bench/ingest-stall.ts";

const events = 100_000;

describe("a 100k-event batch does not starve serving", () => {
  it("keeps the event loop, /ready and FetchClusters responsive while it is applied", async () => {
    const r = await measureIngestStall(largeBatch(events), events);
    console.log(`ingest stall: ${JSON.stringify(r)}`);
    expect(r.status).toBe(200);
    expect(r.maxBusyStallMs).toBeLessThan(200);
    expect(r.maxStallMs).toBeLessThan(2000);
    expect(r.readyProbes).toBeGreaterThan(10);
    expect(r.fetchProbes).toBeGreaterThan(10);
    expect(r.readyMaxMs).toBeLessThan(2000);
    expect(r.fetchMaxMs).toBeLessThan(3000);
  }, 600_000);
});
