/**
 * The ingest lease over the memory store on a manual clock (no sleeps): taken when free or expired,
 * waited for with jittered backoff, given up on with IngestBusyError after maxWaitMs, renewed while
 * a batch runs, lost to a writer that took it over (the batch learns it before its commit), and
 * left expired by a failed batch so the next taker recovers what it left.
 */
import { describe, expect, it } from "vitest";
import {
  createIngestLease,
  IngestBusyError,
  IngestLeaseLostError,
  type IngestLeaseOptions,
  type IngestLeaseRecord,
} from "../../../lib/core/ingest-lease.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { advanceUntilSettled, createManualClock } from "../relay/manual-clock.ts";

function harness(overrides: Partial<IngestLeaseOptions> = {}) {
  const store = createMemoryStore();
  const clock = createManualClock();
  let takeovers = 0;
  let ids = 0;
  const lease = createIngestLease({
    store,
    timers: clock,
    ttlMs: 30_000,
    maxWaitMs: 10_000,
    random: () => 0.5,
    onTakeover: async () => {
      takeovers++;
    },
    newId: () => `owner-${++ids}`,
    ...overrides,
  });
  const held = async () => (await store.get<IngestLeaseRecord>(keys.ingestLease()))?.value;
  const drive = <T>(p: Promise<T>, step = 5) => advanceUntilSettled(clock, p, step);
  return { store, clock, lease, held, drive, takeovers: () => takeovers };
}

describe("the ingest lease", () => {
  it("is held for the batch and deleted after it", async () => {
    const h = harness();
    const during = await h.lease.run(() => h.held());
    expect(during).toEqual({ owner: "owner-1", expiresAt: 30_000 });
    expect(await h.held()).toBeUndefined();
    expect(h.takeovers()).toBe(0);
  });

  it("serializes batches: the second runs after the first released, never inside it", async () => {
    const h = harness();
    const order: string[] = [];
    let release: () => void = () => {};
    const first = h.lease.run(async () => {
      order.push("first begins");
      await new Promise<void>((r) => {
        release = r;
      });
      order.push("first ends");
    });
    await h.clock.settle();
    const second = h.lease.run(async () => {
      order.push("second");
    });
    await h.clock.advance(200);
    expect(order).toEqual(["first begins"]);
    release();
    await h.drive(Promise.all([first, second]));
    expect(order).toEqual(["first begins", "first ends", "second"]);
  });

  it("gives up after maxWaitMs with a 503-style error naming the holder; nothing runs", async () => {
    const h = harness();
    await h.store.put<IngestLeaseRecord>(keys.ingestLease(), { owner: "elsewhere", expiresAt: 25_000 });
    let ran = false;
    const run = h.lease.run(async () => {
      ran = true;
    });
    const err = await h.drive(run, 50).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestBusyError);
    expect((err as IngestBusyError).message).toMatch(/holder "elsewhere".*gave up after waiting 1\d{4} ms/);
    expect((err as IngestBusyError).retryAfterSeconds).toBe(10);
    expect(h.clock.now()).toBeLessThan(10_600);
    expect(ran).toBe(false);
  });

  it("takes over a hold that expired (its holder died) and runs onTakeover first", async () => {
    const h = harness();
    await h.store.put<IngestLeaseRecord>(keys.ingestLease(), { owner: "dead", expiresAt: 100 });
    const seen = await h.drive(h.lease.run(async () => h.takeovers()));
    expect(seen).toBe(1);
    expect(h.clock.now()).toBeGreaterThanOrEqual(100);
    expect(await h.held()).toBeUndefined();
  });

  it("renews the hold while a long batch runs, so nobody takes it over", async () => {
    const h = harness();
    const other = harness();
    const long = h.lease.run(async () => {
      await new Promise<void>((r) => h.clock.setTimeout(r, 100_000));
      return h.held();
    });
    await h.clock.advance(90_000);
    const now = (await h.held())?.expiresAt ?? 0;
    expect(now).toBeGreaterThan(h.clock.now());
    // Another lease over the same store finds it held (the same store, its own clock at the same time).
    const store = h.store;
    const contender = createIngestLease({ store, timers: h.clock, maxWaitMs: 0 });
    await expect(contender.run(async () => 1)).rejects.toBeInstanceOf(IngestBusyError);
    const last = await h.drive(long);
    expect(last?.owner).toBe("owner-1");
    expect(other.takeovers()).toBe(0);
  });

  it("a batch whose hold another writer took learns it before its commit; the other's hold stays", async () => {
    const h = harness();
    const err = await h.lease
      .run(async (held) => {
        const taken: IngestLeaseRecord = { owner: "thief", expiresAt: 1e12 };
        await h.store.put(keys.ingestLease(), taken);
        await held.renew();
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestLeaseLostError);
    expect((await h.held())?.owner).toBe("thief");
  });

  it("a batch that failed leaves the hold expired, so the next taker recovers what it left", async () => {
    const h = harness();
    await expect(
      h.lease.run(async () => {
        throw new Error("store failed mid-commit");
      }),
    ).rejects.toThrow("store failed mid-commit");
    expect(await h.held()).toEqual({ owner: "failed", expiresAt: 0 });
    await h.lease.run(async () => {});
    expect(h.takeovers()).toBe(1);
  });

  it("before the commit: no write when the hold is fresh; the loss a heartbeat found stops the batch", async () => {
    const h = harness();
    const fresh = await h.lease.run(async (held) => {
      await held.beforeCommit();
      return h.held();
    });
    expect(fresh).toEqual({ owner: "owner-1", expiresAt: 30_000 });

    const err = await h
      .drive(
        h.lease.run(async (held) => {
          await h.store.put<IngestLeaseRecord>(keys.ingestLease(), { owner: "thief", expiresAt: 1e12 });
          await new Promise<void>((r) => h.clock.setTimeout(r, 11_000)); // the heartbeat at 10 s finds it gone
          await held.beforeCommit();
        }),
        100,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestLeaseLostError);
    expect((await h.held())?.owner).toBe("thief");
  });
});
