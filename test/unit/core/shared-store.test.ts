/**
 * Two mesh cores over ONE memory store (as two Node instances over one DynamoDB table), on one
 * manual clock (no sleeps): concurrent conflicting batches end as some serial order would leave
 * the store, a push one core made reaches the other's feed with the same versions and names, two
 * cores turning at once flush once, a push a dead core queued is flushed by the other, and a core
 * that died mid-commit is recovered by the other (a new state lifetime).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MeshCore } from "../../../lib/core/mesh-core.ts";
import {
  type DeleteOptions,
  keys,
  type ListOptions,
  listAll,
  type PutOptions,
  type Store,
} from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice, event, pod, service } from "../../e2e/support/kube.ts";
import { advanceUntilSettled, createManualClock } from "../relay/manual-clock.ts";
import { ingestEvents, instance } from "./shared-instances.ts";

const port = { name: "grpc", port: 9080 };

/** A store that yields before every call: batches of two cores interleave at each read and write. */
function interleaving(base: Store): Store {
  const tick = () => Promise.resolve();
  return {
    get: <T>(key: string) => tick().then(() => base.get<T>(key)),
    getMany: <T>(ks: readonly string[]) => tick().then(() => base.getMany<T>(ks)),
    put: <T>(key: string, value: T, options?: PutOptions) => tick().then(() => base.put(key, value, options)),
    delete: (key: string, options?: DeleteOptions) => tick().then(() => base.delete(key, options)),
    list: <T>(prefix: string, options?: ListOptions) => tick().then(() => base.list<T>(prefix, options)),
  };
}

const events = (core: MeshCore, raw: unknown[]) => ingestEvents(core, raw);

/** The mesh state a store holds: every key but the push queue and the bookkeeping under meta/. */
async function meshState(store: Store): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const e of await listAll(store, ""))
    if (!e.key.startsWith("push/") && !e.key.startsWith("meta/")) out[e.key] = e.value;
  return out;
}

/** `object` with its resourceVersion set. */
function at<T extends { metadata: object }>(object: T, rv: number): T {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
}

type Ev = { type: "ADDED" | "MODIFIED" | "DELETED"; object: unknown };

/** Runs `a` on one core and `b` on another at once, over one store; the mesh state they leave. */
async function concurrently(a: Ev[], b: Ev[], shared = true) {
  const base = createMemoryStore();
  const store = interleaving(base);
  const clock = createManualClock();
  const x = instance(store, clock, "a", { shared });
  const y = instance(store, clock, "b", { shared });
  await x.core.start();
  await y.core.start();
  await advanceUntilSettled(clock, Promise.all([events(x.core, a), events(y.core, b)]));
  x.core.stop();
  y.core.stop();
  expect(await base.get(keys.ingestLease())).toBeUndefined();
  return meshState(base);
}

/** The mesh state after `batches` applied one after another by one core. */
async function serially(...batches: Ev[][]) {
  const store = createMemoryStore();
  const clock = createManualClock();
  const x = instance(store, clock, "s", { shared: false });
  await x.core.start();
  for (const b of batches) await events(x.core, b);
  x.core.stop();
  return meshState(store);
}

describe("ingest over a shared store", () => {
  const svc = (rv: number, p = 9080) => at(service("reviews", "default", [{ name: "grpc", port: p }]), rv);
  const eps = (rv: number, ...ips: string[]) =>
    at(
      endpointSlice(
        "reviews-1",
        "reviews",
        "default",
        port,
        ips.map((ip) => ({ ip, ready: true })),
      ),
      rv,
    );
  const cases: { name: string; a: Ev[]; b: Ev[] }[] = [
    {
      name: "the newer resourceVersion wins whichever batch commits last",
      a: [event("ADDED", svc(7, 9080))],
      b: [event("ADDED", svc(5, 9090))],
    },
    {
      name: "a delete and an older update of one object",
      a: [event("ADDED", svc(3)), event("ADDED", eps(4, "10.1.0.1"))],
      b: [event("DELETED", svc(6)), event("MODIFIED", eps(2, "10.1.0.2"))],
    },
    {
      name: "batches touching one shard from both sides",
      a: [event("ADDED", svc(3)), event("ADDED", at(pod("reviews", "default", "10.1.0.1"), 3))],
      b: [
        event("ADDED", eps(4, "10.1.0.1", "10.1.0.2")),
        event("ADDED", at(pod("reviews", "default", "10.1.0.2"), 5)),
      ],
    },
  ];
  it.each(cases)("$name: the outcome of a serial order", async (c) => {
    const got = await concurrently(c.a, c.b);
    const orders = [await serially(c.a, c.b), await serially(c.b, c.a)];
    expect(orders).toContainEqual(got);
  });

  it("without the lease the same batches can end in no serial order (why the lease exists)", async () => {
    const c = cases[0] as (typeof cases)[number];
    const got = await concurrently(c.a, c.b, false);
    const orders = [await serially(c.a, c.b), await serially(c.b, c.a)];
    expect(orders).not.toContainEqual(got);
  });

  it("any two conflicting batches end as one of the two serial orders", async () => {
    const objects = [
      (rv: number) => svc(rv, 9080),
      (rv: number) => svc(rv, 9090),
      (rv: number) => eps(rv, "10.1.0.1"),
      (rv: number) => eps(rv, "10.1.0.1", "10.1.0.2"),
      (rv: number) => at(pod("reviews", "default", "10.1.0.1"), rv),
    ];
    const ev = fc
      .tuple(
        fc.constantFrom("ADDED", "MODIFIED", "DELETED" as const),
        fc.integer({ min: 0, max: objects.length - 1 }),
        fc.integer({ min: 1, max: 9 }),
      )
      .map(([type, i, rv]) => event(type as Ev["type"], (objects[i] as (rv: number) => unknown)(rv)) as Ev);
    const batch = fc.array(ev, { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(batch, batch, async (a, b) => {
        const got = await concurrently(a, b);
        const orders = [await serially(a, b), await serially(b, a)];
        expect(orders).toContainEqual(got);
      }),
      { numRuns: 25 },
    );
  });
});
