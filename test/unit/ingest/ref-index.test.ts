import { describe, expect, it } from "vitest";
import { partEntries } from "../../../lib/ingest/buckets.ts";
import {
  type BucketOn,
  bucketOf,
  type RefBucketPart,
  type RefEntry,
  refsOf,
  updateRefs,
} from "../../../lib/ingest/ref-index.ts";
import { keys, listAll } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { maxPartChars, splitParts } from "../../../lib/store/parts.ts";
import { endpointSlice, event, pod, podName, service } from "../../e2e/support/kube.ts";
import { ingestInto, migrationStores } from "./migration-stores.ts";

const host = "reviews.default.svc.cluster.local";

const sliceOf = (...ips: string[]) =>
  endpointSlice(
    "reviews-1",
    "reviews",
    "default",
    { name: "grpc", port: 9080 },
    ips.map((ip) => ({ ip, ready: true })),
  );

describe("bucketOf", () => {
  it.each([
    ["ip", "10.244.1.7", "10.244.1"],
    ["ip", "10.244.1.200", "10.244.1"],
    ["ip", "fd00:10:244:1::c", "fd00001002440001"],
    ["ip", "fd00:10:244:1:ffff::1", "fd00001002440001"],
    ["pod", "default/reviews-v1-5b4d9c7f-x2k9p", "default/reviews-v1-5b4d9c7f"],
    ["pod", "default/single", "default/single"],
    ["pod", "my-ns/web", "my-ns/web"],
  ] as [BucketOn, string, string][])("%s %s -> %s", (on, id, bucket) => {
    expect(bucketOf(on, id)).toBe(bucket);
  });
});

describe("keys per slice", () => {
  it("a slice of 10 endpoints naming their pods (one owner) on one node writes two index keys", async () => {
    const store = createMemoryStore();
    const events = ingestInto(store);
    const ips = Array.from({ length: 10 }, (_, i) => `10.244.1.${i + 1}`);
    await events(event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])));
    await events(event("ADDED", sliceOf(...ips)));
    const index = await listAll<RefBucketPart>(store, "refs/");
    expect(index.map((e) => e.key)).toEqual([keys.refBucket("pod", "east", "default/reviews-10-244-1", 0)]);
    expect(partEntries(index[0]!.value)).toHaveLength(10);
    expect((await listAll(store, "ref/")).map((e) => e.key)).toEqual([
      keys.ref("node", "east", "node-1", "default", host, "reviews-1"),
    ]);
  });

  it("a slice of 10 endpoints of one /24 without pods writes one bucket of IPs", async () => {
    const store = createMemoryStore();
    const events = ingestInto(store);
    const raw = sliceOf(...Array.from({ length: 10 }, (_, i) => `10.244.1.${i + 1}`));
    for (const e of raw.endpoints) (e as { targetRef?: unknown }).targetRef = undefined;
    await events(event("ADDED", JSON.parse(JSON.stringify(raw))));
    const index = await listAll<RefBucketPart>(store, "refs/");
    expect(index.map((e) => e.key)).toEqual([keys.refBucket("ip", "east", "10.244.1", 0)]);
    expect(partEntries(index[0]!.value).map((r) => r[0])).toHaveLength(10);
  });
});

describe("parts", () => {
  const entry = (n: number): RefEntry => ["10.0.0.1", "ns", `h-${n}`.padEnd(200, "x"), "s"];

  it("cuts entries at the budget, each part holding at least one entry", () => {
    const refs = Array.from({ length: 10 }, (_, i) => entry(i));
    expect(splitParts(refs, 500).map((p) => p.length)).toEqual([2, 2, 2, 2, 2]);
    expect(splitParts(refs, 10).map((p) => p.length)).toEqual(Array(10).fill(1));
    expect(splitParts([], 10)).toEqual([]);
  });

  it("a part is stored as one flat list of names; a part in the tuple layout of older versions reads as it is", async () => {
    const store = createMemoryStore();
    await updateRefs(
      store,
      "east",
      ["ns", "h", "s"],
      [
        { on: "ip", id: "10.0.0.2", add: true },
        { on: "ip", id: "10.0.0.1", add: true },
      ],
    );
    const key = keys.refBucket("ip", "east", "10.0.0", 0);
    expect((await store.get(key))?.value).toEqual({
      flat: ["10.0.0.1", "ns", "h", "s", "10.0.0.2", "ns", "h", "s"],
      width: 4,
    });
    await store.put(key, { refs: [["10.0.0.1", "ns", "h", "s"]] });
    expect(await refsOf(store, "east", [{ on: "ip", id: "10.0.0.1" }])).toEqual([
      { namespace: "ns", hostname: "h", slice: "s" },
    ]);
    await updateRefs(store, "east", ["ns", "h2", "s"], [{ on: "ip", id: "10.0.0.1", add: true }]);
    expect((await store.get(key))?.value).toEqual({
      flat: ["10.0.0.1", "ns", "h", "s", "10.0.0.1", "ns", "h2", "s"],
      width: 4,
    });
  });

  it("a bucket past one value's budget spans parts, every one within it, and is gone once empty", async () => {
    const store = createMemoryStore();
    // Every address of one /24 named by each of 10 slices of long hostnames: 2,560 entries.
    const ips = Array.from({ length: 256 }, (_, i) => `10.0.0.${i}`);
    const sliceKey = (i: number) => ["ns", `h-${i}`.padEnd(240, "x"), "s"] as const;
    const all = (add: boolean) => ips.map((id) => ({ on: "ip" as const, id, add }));
    for (let i = 0; i < 10; i++) await updateRefs(store, "east", sliceKey(i), all(true));
    const parts = await listAll<RefBucketPart>(store, "refs/");
    expect(parts.length).toBe(3);
    expect(parts[0]?.value.parts).toBe(3);
    for (const p of parts) expect(JSON.stringify(p.value).length).toBeLessThan(1.5 * maxPartChars);
    const found = await refsOf(store, "east", [{ on: "ip", id: "10.0.0.1" }]);
    expect(found.map((f) => f.hostname)).toEqual(Array.from({ length: 10 }, (_, i) => sliceKey(i)[1]));
    expect(await refsOf(store, "east", [{ on: "ip", id: "10.0.1.1" }])).toEqual([]);
    for (let i = 0; i < 10; i++) await updateRefs(store, "east", sliceKey(i), all(false));
    expect(await listAll(store, "refs/")).toEqual([]);
  });
});

const stores = migrationStores("edgepilot-ref-index-");

describe.each(stores)("migration of the previous layout, %s store", (_name, open) => {
  it("the first batch rewrites ref/ keys into buckets; a Pod arriving then finds its slice", async () => {
    const store = open();
    const ip = "10.244.1.7";
    await ingestInto(store)(
      event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
      event("ADDED", sliceOf(ip)),
    );
    // Turn the index back into what an older version wrote.
    for (const e of await listAll<RefBucketPart>(store, "refs/")) {
      const on = e.key.split("/")[1] as BucketOn;
      for (const [id, ns, h, s] of partEntries(e.value)) {
        await store.put(keys.ref(on, "east", id, ns, h, s), { namespace: ns, hostname: h });
      }
      await store.delete(e.key);
    }
    expect(await listAll(store, keys.refsOn("pod"))).toHaveLength(1);
    const shardBefore = await store.get(keys.shards("default", host));

    const lines: string[] = [];
    const summary = await ingestInto(store, lines)(event("ADDED", pod("reviews", "default", ip)));
    expect(lines).toEqual(["ingest: moved 1 reverse-index key(s) of the previous layout into buckets"]);
    expect(await listAll(store, keys.refsOn("pod"))).toEqual([]);
    expect(await refsOf(store, "east", [{ on: "pod", id: `default/${podName("reviews", ip)}` }])).toEqual([
      { namespace: "default", hostname: host, slice: "reviews-1" },
    ]);
    expect(await refsOf(store, "east", [{ on: "node", id: "node-1" }])).toEqual([
      { namespace: "default", hostname: host, slice: "reviews-1" },
    ]);
    // The pod's labels and service account reached the shard: its slice was found.
    expect(summary.push).toBeDefined();
    const shardAfter = await store.get(keys.shards("default", host));
    expect(shardAfter?.version).not.toBe(shardBefore?.version);
    expect(JSON.stringify(shardAfter?.value)).toContain("spiffe://cluster.local/ns/default/sa/reviews");
  });
});
