/**
 * All or nothing through the real ingest app: a batch that fails anywhere (a bad object after good
 * ones, an exception thrown while applying) leaves the store byte-identical: no state, no `obj/`
 * version record, no queued push; the retry of the repaired batch then applies it whole. And the
 * resync rule: a list older than an object's recorded version neither deletes nor overwrites it.
 */
import { describe, expect, it } from "vitest";
import { encodeValue } from "../../../lib/store/codec.ts";
import { keys } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { listAll, type Store } from "../../../lib/store/store.ts";
import { ingestApp } from "./support/ingest-app.ts";
import { ev, pod, service, slice } from "./support/kube.ts";

function setup(store: Store = createMemoryStore()) {
  const { app, lines: logs, post } = ingestApp(store);
  return { app, logs, post };
}

const dump = async (store: Store, versions = true) =>
  (await listAll(store, "")).map((e) => `${e.key}=${versions ? e.version : ""}:${encodeValue(e.value)}`);

/** A memory store whose reads (get, getMany) or writes under `prefix` throw, as a broken adapter or a bug would. */
function failingOn(op: "get" | "put", prefix: string): Store {
  const store = createMemoryStore();
  const boom = (key: string) => {
    if (key.startsWith(prefix)) throw new Error(`boom on ${op} ${key}\nforged log line`);
  };
  return {
    ...store,
    get: (key) => {
      if (op === "get") boom(key);
      return store.get(key);
    },
    getMany: (keys) => {
      if (op === "get") for (const key of keys) boom(key);
      return store.getMany(keys);
    },
    put: (key, value, options) => {
      if (op === "put") boom(key);
      return store.put(key, value, options);
    },
  };
}

describe("a batch is all or nothing", () => {
  it("a malformed event after good ones is a 400 naming it, and nothing of the batch is applied", async () => {
    const store = createMemoryStore();
    const { post } = setup(store);
    const good = [
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("reviews-1", "reviews", "shop", [{ ip: "10.0.0.1" }])),
    ];
    const before = await dump(store);
    const refused = await post("/v1/events", [...good, { type: "ADDED", object: "ratings" }]);
    expect(refused).toMatchObject({ status: 400, body: { index: 2, field: "object" } });
    expect(await dump(store)).toEqual(before);
    // The sender repairs the batch and sends it again: it applies whole, versions recorded.
    const retried = await post("/v1/events", good);
    expect(retried).toMatchObject({ status: 200, body: { applied: 2 } });
    expect(await store.get(keys.object("east", "Service", "shop", "reviews"))).toBeDefined();
  });

  // Reads fail while the batch applies (the staged view is dropped: byte-identical, versions too);
  // writes fail while it commits (the writes made are rolled back: identical values).
  const failures = [
    { name: "reading a pod while applying", op: "get", prefix: "pod/" },
    { name: "reading a slice while applying", op: "get", prefix: "eps/" },
    { name: "committing a pod", op: "put", prefix: "pod/" },
    { name: "committing a version record", op: "put", prefix: "obj/east/Pod/" },
    { name: "committing the queued push", op: "put", prefix: "push/pending/" },
  ] as const;
  for (const f of failures) {
    it(`an exception ${f.name} is a 500 with nothing applied and a log line`, async () => {
      const store = failingOn(f.op, f.prefix);
      const { post, logs } = setup(store);
      const seeded = await post("/v1/events", [ev("ADDED", service("reviews", "shop"))]);
      expect(seeded.status).toBe(f.op === "put" && f.prefix === "push/pending/" ? 500 : 200);
      const before = await dump(store, f.op === "get");
      const batch = [
        ev("ADDED", slice("reviews-1", "reviews", "shop", [{ ip: "10.0.0.1", pod: "r1" }])),
        ev("ADDED", pod("r1", "shop", "10.0.0.1")),
      ];
      const res = await post("/v1/events", batch);
      expect(res).toMatchObject({
        status: 500,
        body: { error: expect.stringMatching(/nothing of this call was applied/) },
      });
      expect(await dump(store, f.op === "get")).toEqual(before);
      const line = logs.findLast((l) => l.includes("internal error"));
      expect(line).toMatch(/nothing applied: ".*boom on /);
      expect(line).not.toContain("\n");
    });
  }
});

describe("the commit marker (keys.commitMarker)", () => {
  it("is gone after a commit, and after a failed commit that was rolled back", async () => {
    const store = failingOn("put", "push/pending/");
    const { post } = setup(store);
    expect((await post("/v1/events", [ev("ADDED", service("reviews", "shop"))])).status).toBe(500);
    expect(await store.get(keys.commitMarker())).toBeUndefined();
    const base = createMemoryStore();
    const written: string[] = [];
    const watched: Store = {
      ...base,
      put: (key, value, options) => {
        written.push(key);
        return base.put(key, value, options);
      },
    };
    await setup(watched).post("/v1/events", [ev("ADDED", service("reviews", "shop"))]);
    expect(written[0]).toBe(keys.commitMarker());
    expect(written.length).toBeGreaterThan(1);
    expect(await base.get(keys.commitMarker())).toBeUndefined();
  });

  it("stays when the rollback itself failed, so the next start knows the state is cut short", async () => {
    const inner = failingOn("put", "push/pending/");
    const store: Store = {
      ...inner,
      delete: async (key, options) => {
        if (key.startsWith("svc/")) throw new Error("the store went away");
        return inner.delete(key, options);
      },
    };
    const { post } = setup(store);
    const res = await post("/v1/events", [ev("ADDED", service("reviews", "shop"))]);
    expect(res.status).toBe(500);
    expect((await store.get(keys.commitMarker()))?.value).toMatchObject({ writes: expect.any(Number) });
  });
});

describe("resync never deletes or overwrites an object newer than the list", () => {
  const svc = (name: string, rv: string, port = 9080) => ({
    ...service(name, "shop", { port }),
    metadata: { ...service(name, "shop").metadata, resourceVersion: rv },
  });
  const list = (rv: string, items: unknown[]) => ({
    kind: "ServiceList",
    metadata: { resourceVersion: rv },
    items,
  });

  it("keeps an object recorded after the list was taken, and its recorded version", async () => {
    const store = createMemoryStore();
    const { post } = setup(store);
    await post("/v1/events", [ev("ADDED", svc("old", "100")), ev("ADDED", svc("fresh", "300"))]);
    const res = await post("/v1/resync?kind=Service", list("200", [svc("old", "100")]));
    expect(res).toMatchObject({ status: 200, body: { deleted: 0, stale: 2 } });
    const record = await store.get<{ resourceVersion: string; deleted: boolean }>(
      keys.object("east", "Service", "shop", "fresh"),
    );
    expect(record?.value).toMatchObject({ resourceVersion: "300", deleted: false });
    expect(await listAll(store, keys.servicePrefix("shop", "fresh.shop.svc.cluster.local"))).toHaveLength(1);
  });

  it("does not overwrite an object with an older copy from the list", async () => {
    const store = createMemoryStore();
    const { post } = setup(store);
    await post("/v1/events", [ev("ADDED", svc("reviews", "300", 9090))]);
    const before = await dump(store);
    const res = await post("/v1/resync?kind=Service", list("250", [svc("reviews", "120", 9080)]));
    expect(res).toMatchObject({ status: 200, body: { stale: 1, applied: 0, deleted: 0 } });
    expect(await dump(store)).toEqual(before);
  });

  it("still deletes what a newer list lacks", async () => {
    const store = createMemoryStore();
    const { post } = setup(store);
    await post("/v1/events", [ev("ADDED", svc("gone", "100")), ev("ADDED", svc("kept", "110"))]);
    const res = await post("/v1/resync?kind=Service", list("400", [svc("kept", "110")]));
    expect(res).toMatchObject({ status: 200, body: { deleted: 1 } });
    expect(await listAll(store, keys.servicePrefix("shop", "gone.shop.svc.cluster.local"))).toHaveLength(0);
  });
});
