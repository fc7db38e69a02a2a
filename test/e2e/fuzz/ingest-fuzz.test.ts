/**
 * Fuzz suite over every ingest path, through the real hono app: /v1/events (JSON and NDJSON),
 * /v1/resync and /v1/admission take thousands of generated bodies: arbitrary JSON and text, and
 * valid Kubernetes objects mutated. Every answer is 2xx or 4xx, never 5xx; a refused call leaves
 * the whole store (published xds/ resources, queued pushes, version records) byte-identical; an
 * accepted one is flushed by the real debounce turn, which must not fail on what was accepted.
 * A few calls go over a real HTTP server. Counts are printed at the end (the note reports them).
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admissionReview, batch, resyncCall, validBatch } from "./arbitraries.ts";
import { createFuzzMesh } from "./harness.ts";

const counts = { requests: 0, events: 0, accepted: 0, refused: 0, serverErrors: 0 };
let mesh: Awaited<ReturnType<typeof createFuzzMesh>>;

beforeAll(async () => {
  mesh = await createFuzzMesh();
});

afterAll(() => {
  console.log(`ingest fuzz: ${JSON.stringify(counts)}`);
});

type Send = (path: string, body: string, contentType?: string) => Promise<Response>;

/** Sends one call and checks the invariants; returns the status. */
async function check(path: string, body: string, events: number, contentType?: string, send?: Send) {
  const before = await mesh.snapshot();
  const res = await (send ?? mesh.post)(path, body, contentType);
  const text = await res.text();
  counts.requests++;
  counts.events += events;
  if (res.status >= 500) counts.serverErrors++;
  expect(
    res.status,
    `${path} answered ${res.status}: ${text.slice(0, 300)}\nbody: ${body.slice(0, 600)}`,
  ).toBeLessThan(500);
  if (res.status >= 400) {
    counts.refused++;
    expect(await mesh.snapshot(), `refused ${path} changed the store: ${text}`).toBe(before);
  } else {
    counts.accepted++;
    await mesh.flush();
  }
  return res.status;
}

describe("ingest fuzz: never a 5xx, refusals change nothing", () => {
  it("/v1/events takes generated batches as a JSON array", async () => {
    await fc.assert(
      fc.asyncProperty(batch, async (events) => {
        await check("/v1/events", JSON.stringify(events), events.length);
      }),
      { numRuns: 700 },
    );
  });

  it("/v1/events applies valid objects in any order, replayed, reordered and deleted", async () => {
    await fc.assert(
      fc.asyncProperty(validBatch, async (events) => {
        expect(await check("/v1/events", JSON.stringify(events), events.length)).toBe(200);
      }),
      { numRuns: 250 },
    );
  });

  it("/v1/events takes generated batches as NDJSON", async () => {
    await fc.assert(
      fc.asyncProperty(batch, async (events) => {
        const body = events.map((e) => JSON.stringify(e)).join("\n");
        await check("/v1/events", body, events.length, "application/x-ndjson");
      }),
      { numRuns: 300 },
    );
  });

  it("/v1/resync takes generated lists of every kind", async () => {
    await fc.assert(
      fc.asyncProperty(resyncCall, async ({ kind, listRv, items, bare }) => {
        const body = bare ? { items } : { kind: `${kind}List`, metadata: { resourceVersion: listRv }, items };
        await check(`/v1/resync?kind=${kind}`, JSON.stringify(body), items.length);
      }),
      { numRuns: 500 },
    );
  });

  it("/v1/admission takes generated AdmissionReviews", async () => {
    await fc.assert(
      fc.asyncProperty(admissionReview, async (review) => {
        await check("/v1/admission", JSON.stringify(review), 1);
      }),
      { numRuns: 500 },
    );
  });

  it("every path takes arbitrary JSON and arbitrary text", async () => {
    const path = fc.constantFrom(
      "/v1/events",
      "/v1/resync?kind=Pod",
      "/v1/resync?kind=Service",
      "/v1/admission",
    );
    const body = fc.oneof(
      fc.json({ maxDepth: 4 }),
      fc.string({ maxLength: 200 }),
      fc.string({ unit: "binary" }),
    );
    const type = fc.constantFrom("application/json", "application/x-ndjson", "text/plain");
    await fc.assert(
      fc.asyncProperty(path, body, type, async (p, b, t) => {
        await check(p, b, 1, t);
      }),
      { numRuns: 600 },
    );
  });

  it("a real HTTP server answers generated batches the same way", async () => {
    const server = serve({ fetch: mesh.app.fetch, hostname: "127.0.0.1", port: 0 });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    const send: Send = (path, body, contentType = "application/json") =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        body,
        headers: { "content-type": contentType },
      });
    try {
      await fc.assert(
        fc.asyncProperty(batch, async (events) => {
          await check("/v1/events", JSON.stringify(events), events.length, "application/json", send);
        }),
        { numRuns: 60 },
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("found no 5xx in any of it", () => {
    expect(counts.serverErrors).toBe(0);
    expect(counts.requests).toBeGreaterThan(2500);
    expect(counts.refused).toBeGreaterThan(0);
    expect(counts.accepted).toBeGreaterThan(0);
  });
});
