/**
 * The flush lease under a long flush over a shared store (several instances turning at once): a
 * flush renews its lease between chunks, so another instance never takes it over while it still
 * publishes; one stalled past the lease, and taken over, stops at its next chunk.
 */
import { describe, expect, it } from "vitest";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { applyEvents, validateEvents } from "../../../lib/ingest/index.ts";
import { type FlushDeps, type FlushResult, flush } from "../../../lib/push/flush.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import { generators } from "../../../lib/resources/generators/index.ts";
import type { Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { event, service } from "../../e2e/support/kube.ts";

/** A store with three queued new services, a clock, and a flush over any view of it. */
async function setup() {
  const store = createMemoryStore();
  let now = 1_000_000;
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  const v = validateEvents(
    ["a", "b", "c"].map((n) => event("ADDED", service(n, "default", [{ name: "grpc", port: 9080 }]))),
  );
  if (!v.ok) throw new Error(v.error.message);
  await applyEvents({ store, registry: defaultRegistryOptions, now: clock.now }, "c1", v.value);
  const run = async (s: Store): Promise<FlushResult> => {
    const deps: FlushDeps = {
      store: s,
      generators,
      context: { domainSuffix: "cluster.local" },
      now: clock.now,
      leaseMs: 30_000,
      chunkServices: 1,
    };
    return flush(
      deps,
      (await readQueue(store)).map((q) => q.key),
    );
  };
  /** `store`, calling `atChunkEnd` after each chunk's service record is written (gen/ is its last write). */
  const slow = (atChunkEnd: () => Promise<void>): Store => ({
    get: (k) => store.get(k),
    getMany: (ks) => store.getMany(ks),
    delete: (k, o) => store.delete(k, o),
    list: (p, o) => store.list(p, o),
    put: async (k, value, o) => {
      const r = await store.put(k, value, o);
      if (k.startsWith("gen/")) await atChunkEnd();
      return r;
    },
  });
  return { store, clock, run, slow };
}

describe("the flush lease", () => {
  it("is renewed between the chunks of a long flush: an instance turning meanwhile finds it busy", async () => {
    const h = await setup();
    const others: string[] = [];
    const result = await h.run(
      h.slow(async () => {
        h.clock.advance(20_000); // each chunk takes 20 s: three outlast the 30 s lease
        others.push((await h.run(h.store)).kind);
      }),
    );
    expect(result).toMatchObject({ kind: "done", version: 1, recovered: false });
    expect(others).toEqual(["busy", "busy", "busy"]);
  });

  it("a flush stalled past its lease and taken over stops at its next chunk; the taker recovers", async () => {
    const h = await setup();
    let taken: FlushResult | undefined;
    const stalled = h.run(
      h.slow(async () => {
        if (taken) return;
        h.clock.advance(31_000); // stalled past the lease: another instance takes over
        taken = await h.run(h.store);
      }),
    );
    await expect(stalled).rejects.toThrow(/another instance took over the flush lease/);
    expect(taken).toMatchObject({ kind: "done", version: 1, recovered: true });
  });
});
