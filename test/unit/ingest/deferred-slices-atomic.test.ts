/**
 * A watch batch whose slice events were noted (deferred-slices.ts) and that then fails, at
 * validation or anywhere while applying (a later slice, an event after the noted slices were
 * refreshed, the batch's final refresh), leaves the store exactly as it found it (every key,
 * version and value) and leaves nothing noted behind: the next batch applies as on a store that
 * never saw the failed one.
 */

import { describe, expect, it } from "vitest";
import { encodeValue } from "../../../lib/store/codec.ts";
import { keys } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { listAll, type Store } from "../../../lib/store/store.ts";
import { ingestApp } from "./support/ingest-app.ts";
import { ev, pod, service, slice } from "./support/kube.ts";

const host = "ratings.shop.svc.cluster.local";

/** A memory store whose reads of one key throw once armed, as a broken adapter or a bug would. */
function armedStore(): Store & { arm: (key: string | undefined) => void } {
  const store = createMemoryStore();
  let armed: string | undefined;
  const boom = (key: string) => {
    if (key === armed) throw new Error(`boom on get ${key}`);
  };
  return {
    ...store,
    get: (key) => {
      boom(key);
      return store.get(key);
    },
    getMany: (ks) => {
      for (const key of ks) boom(key);
      return store.getMany(ks);
    },
    arm: (key) => {
      armed = key;
    },
  };
}

function post(store: Store) {
  const { post: send } = ingestApp(store);
  return async (body: unknown) => (await send("/v1/events", body)).status;
}

/** Every key with its version and encoded value. */
const dump = async (store: Store) =>
  (await listAll(store, "")).map((e) => `${e.key}=${e.version}:${encodeValue(e.value)}`);

/** What the store serves from (no queued pushes: their keys are not deterministic). */
const state = async (store: Store) =>
  (await listAll(store, ""))
    .filter((e) => !e.key.startsWith(keys.pendingPrefix()))
    .map((e) => `${e.key}=${encodeValue(e.value)}`);

const before = [
  ev("ADDED", service("ratings", "shop")),
  ev("ADDED", slice("r-a", "ratings", "shop", [{ ip: "10.1.0.1" }])),
];
const noted = [
  ev("MODIFIED", slice("r-a", "ratings", "shop", [{ ip: "10.1.0.9" }])),
  ev("ADDED", slice("r-b", "ratings", "shop", [{ ip: "10.1.0.2" }])),
  ev("ADDED", slice("r-c", "ratings", "shop", [{ ip: "10.1.0.3" }])),
];
const { spec: _, ...noSpec } = service("reviews", "shop");
/** Applied after the failed batch (and, on the reference store, after `before` alone). */
const next = [ev("ADDED", slice("r-z", "ratings", "shop", [{ ip: "10.1.0.26" }]))];

interface Case {
  name: string;
  events: unknown[];
  /** The key whose read throws while the batch applies. */
  failOn?: string;
  status: number;
}

const cases: Case[] = [
  {
    name: "a later event is malformed",
    events: [...noted, { type: "PATCHED", object: noSpec }],
    status: 400,
  },
  {
    name: "a later slice's read throws while the earlier ones are only noted",
    events: [...noted, ev("ADDED", slice("r-d", "ratings", "shop", [{ ip: "10.1.0.4" }]))],
    failOn: keys.slice("shop", host, "east", "r-d"),
    status: 500,
  },
  {
    name: "a Pod event after the noted slices were refreshed throws",
    events: [...noted, ev("ADDED", pod("ratings-1", "shop", "10.1.0.2"))],
    failOn: keys.pod("east", "shop", "ratings-1"),
    status: 500,
  },
  {
    name: "the batch's final refresh throws",
    events: noted,
    failOn: keys.shards("shop", host),
    status: 500,
  },
];

describe("a failed watch batch with noted slices leaves nothing", () => {
  it.each(cases)("$name", async (c) => {
    const store = armedStore();
    const send = post(store);
    expect(await send(before)).toBe(200);
    const untouched = await dump(store);
    store.arm(c.failOn);
    expect(await send(c.events)).toBe(c.status);
    expect(await dump(store)).toEqual(untouched);
    // Nothing the failed batch noted survives it: the next batch finds what a fresh store finds.
    store.arm(undefined);
    expect(await send(next)).toBe(200);
    const reference = createMemoryStore();
    const sendRef = post(reference);
    expect(await sendRef(before)).toBe(200);
    expect(await sendRef(next)).toBe(200);
    expect(await state(store)).toEqual(await state(reference));
  });
});
