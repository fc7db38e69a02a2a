/**
 * Ingest never starves serving: while the real Node runtime (in-process, real HTTP and gRPC)
 * applies one large call, the event loop keeps turning and `/ready` and Envoy's FetchClusters keep
 * being answered.
 *
 * What is asserted are counts against the apply's length, which load cannot take away: the work
 * yields (the 5 ms timer runs at least once per 100 ms of the apply; the 10 ms pace gives it a
 * turn every slice, an unpaced apply only a few in all), and serving answers meanwhile (/ready and
 * FetchClusters answered at least once per 250 ms of it, none failed). A loaded machine stretches
 * the apply and the pace's yields alike, as the pace counts wall time; the floors (10 turns, 3
 * answers each) still ask for many turns of a fast machine's shorter apply. The one time bound is a
 * freeze detector in seconds, far from any slice plus machine load. How long the busiest step is,
 * against the pace's slice, is measured and printed by `npm run bench` (test/bench/ingest-stall.ts).
 *
 * 20k events (40k resync items), not the 100k the bench measures: the property asserted holds
 * slice by slice, and such a call spans many slices at a fraction of the cost; the steps that grow with the batch (a Map's
 * growth, a body joined whole) are measured by the bench and their causes unit-tested
 * (test/unit/store/key-map.test.ts, test/unit/functions/body-text.test.ts).
 */
import { describe, expect, it } from "vitest";
import { measureStallCase, type StallCase } from "../bench/ingest-stall.ts";

/** Items per call: a resync applies each more cheaply than an event, so its call is larger. */
const sizes: Record<StallCase, number> = { events: 20_000, ndjson: 20_000, resync: 40_000 };
/** A probe that waited this long would mean the loop froze: seconds, not a slice. */
const freezeMs = 10_000;

describe("a large ingest call does not starve serving", () => {
  for (const [which, what] of [
    ["events", "a JSON array of events"],
    ["ndjson", "NDJSON events"],
    ["resync", "a resync PodList"],
  ] as [StallCase, string][]) {
    it(`keeps the event loop turning and /ready and FetchClusters answering while ${what} is applied`, async () => {
      const r = await measureStallCase(which, sizes[which]);
      console.log(`ingest stall (${which}): ${JSON.stringify(r)}`);
      expect(r.status).toBe(200);
      // From the body sent to the answer: the server decoding, validating, applying, committing.
      const applyMs = r.ingestMs - r.sentMs;
      // The work yields: the timer ran between slices all along (see the header for the ratios).
      expect(r.ticks).toBeGreaterThanOrEqual(Math.max(10, applyMs / 100));
      // Serving answers during it: each probe waits 10 ms after an answer, so these come only from
      // turns of the loop between slices.
      expect(r.readyProbes).toBeGreaterThanOrEqual(Math.max(3, applyMs / 250));
      expect(r.fetchProbes).toBeGreaterThanOrEqual(Math.max(3, applyMs / 250));
      expect(r.readyFailures).toBe(0);
      expect(r.fetchFailures).toBe(0);
      expect(r.readyMaxMs).toBeLessThan(freezeMs);
      expect(r.fetchMaxMs).toBeLessThan(freezeMs);
    }, 300_000);
  }
});
