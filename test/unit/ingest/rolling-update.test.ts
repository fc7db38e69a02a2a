/**
 * A rolling update of a 50-pod Deployment across 3 EndpointSlices, replayed the way a relay
 * would deliver it after a rough day: batches, duplicated events, reordered events, and one
 * missed DELETE that only a resync repairs. At the end, what proxies are served must be what the
 * final objects say, and every push during the rollout must be incremental, as Istio's would be.
 */
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../fixtures/seeded.ts";
import { createHarness } from "./support/harness.ts";
import { createCluster, type SimEvent } from "./support/rollout.ts";

const host = "reviews.shop.svc.cluster.local";
const nodes = [
  { name: "node-a", zone: "eu-west1-b" },
  { name: "node-b", zone: "eu-west1-c" },
  { name: "node-c", zone: "eu-west1-d" },
];

/** Delivery troubles: every 7th event is delivered twice; some events arrive after a later one. */
function roughen(events: SimEvent[], rand: () => number): SimEvent[] {
  const out: SimEvent[] = [];
  events.forEach((e, i) => {
    out.push(e);
    if (i % 7 === 3) out.push(e);
  });
  for (let i = 1; i < out.length; i++) {
    if (rand() < 0.15) [out[i - 1], out[i]] = [out[i] as SimEvent, out[i - 1] as SimEvent];
  }
  return out;
}

describe("a rolling update of 50 pods across 3 slices", () => {
  it("ends serving exactly what the final objects say, with incremental pushes", async () => {
    const rand = seededRandom(20261121);
    const k8s = createCluster("shop", "reviews", nodes);
    const sliceOf = (i: number) => `reviews-${["x1a2b", "x3c4d", "x5e6f"][i % 3]}`;
    const v1 = Array.from({ length: 50 }, (_, i) => `reviews-v1-7d9f8-${i}`);
    for (const [i, p] of v1.entries()) k8s.startPod(p, "v1", sliceOf(i), i);
    for (const p of v1) k8s.ready(p);

    const h = createHarness();
    await h.ingest(...k8s.events.splice(0));
    await h.settle();
    expect(await h.served(host)).toEqual(k8s.expected());
    expect(h.flushes.map((f) => f.request?.full)).toEqual([true]);

    // maxSurge 25%: start 12 new pods at a time, wait for them to be ready, then stop 12 old ones.
    const v2: string[] = [];
    for (let wave = 0; wave < 5; wave++) {
      const starting = Array.from(
        { length: Math.min(12, 50 - v2.length) },
        (_, i) => `reviews-v2-5b8d7-${v2.length + i}`,
      );
      for (const [i, p] of starting.entries()) k8s.startPod(p, "v2", sliceOf(i), i + wave);
      for (const p of starting) k8s.ready(p);
      v2.push(...starting);
      for (const p of v1.splice(0, starting.length)) k8s.stopPod(p);
    }
    // The controller compacts the third slice into the first and deletes it; that DELETE is lost.
    // Then a pod that moved out of it fails its readiness probe: only the first slice says so.
    k8s.mergeSlices(sliceOf(2), sliceOf(0));
    k8s.deleteSlice(sliceOf(2));
    const moved = v2[2] as string;
    k8s.unready(moved);
    const rollout = k8s.events.splice(0);
    const missedAt = rollout.findIndex((e) => e.type === "DELETED" && e.object.kind === "EndpointSlice");
    const [missed] = rollout.splice(missedAt, 1);
    expect(missed?.object.metadata.name).toBe(sliceOf(2));

    const delivered = roughen(rollout, rand);
    let stale = 0;
    for (let i = 0; i < delivered.length; i += 25) {
      const summary = await h.ingest(...delivered.slice(i, i + 25));
      stale += summary.stale;
      await h.settle();
    }
    expect(stale).toBeGreaterThan(delivered.length - rollout.length); // every duplicate, and every overtaken event

    // Without the DELETE, the lost slice still lists the unready pod as ready: it keeps getting traffic.
    const want = k8s.expected();
    expect(want.map((e) => e.address)).not.toContain(k8s.ipOf(moved));
    const before = await h.served(host);
    expect(before).toContainEqual(expect.objectContaining({ address: k8s.ipOf(moved), health: "HEALTHY" }));
    expect(before).not.toEqual(want);

    const list = k8s.list("EndpointSlice");
    const resync = await h.resync("EndpointSlice", list.items, list.resourceVersion);
    expect(resync.deleted).toBe(1);
    await h.settle();
    const served = await h.served(host);
    expect(served).toHaveLength(49);
    expect(served).toEqual(want);

    // Istio pushes endpoint changes incrementally; only the first sight of the service was full.
    const rolloutFlushes = h.flushes.slice(1);
    expect(rolloutFlushes.length).toBeGreaterThan(10);
    expect(rolloutFlushes.filter((f) => f.request?.full)).toEqual([]);
    expect(
      rolloutFlushes.every((f) => f.changes.every((c) => c.typeUrl.endsWith("ClusterLoadAssignment"))),
    ).toBe(true);
  });
});
