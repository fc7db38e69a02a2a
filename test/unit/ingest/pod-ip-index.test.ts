import { describe, expect, it } from "vitest";
import { partEntries } from "../../../lib/ingest/buckets.ts";
import {
  migrateUnbucketedPodIps,
  type PodIpBucketPart,
  podsByIp,
  setPodIps,
} from "../../../lib/ingest/pod-ip-index.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice, event, pod, podName, service } from "../../e2e/support/kube.ts";
import { ingestInto, migrationStores } from "./migration-stores.ts";

const host = "reviews.default.svc.cluster.local";
const a = { namespace: "default", name: "a" };
const b = { namespace: "default", name: "b" };

/** A slice of `reviews` whose endpoints name no pod (found by IP, as for pods outside the API). */
function podlessSlice(...ips: string[]) {
  const slice = endpointSlice(
    "reviews-1",
    "reviews",
    "default",
    { name: "grpc", port: 9080 },
    ips.map((ip) => ({ ip, ready: true })),
  );
  return {
    ...slice,
    endpoints: slice.endpoints.map(({ targetRef: _, ...rest }: { targetRef?: unknown }) => rest),
  };
}

/** Counts the reads of pod-IP keys (either layout). */
function countingReads(store: Store) {
  const reads: string[] = [];
  const note = (k: string) => {
    if (k.startsWith("podip")) reads.push(k);
  };
  const counted: Store = {
    ...store,
    get: (k) => {
      note(k);
      return store.get(k);
    },
    getMany: (ks) => {
      for (const k of ks) note(k);
      return store.getMany(ks);
    },
  };
  return { counted, reads };
}

async function served(store: Store) {
  const record = (await store.get<EndpointShardsRecord>(keys.shards("default", host)))?.value;
  return Object.values(record?.shards ?? {})
    .flat()
    .map((e) => `${e.address} ${e.serviceAccount}`)
    .sort();
}

describe("setPodIps / podsByIp", () => {
  type Step = [pod: typeof a, before: string[], after: string[]];
  it.each<[string, Step[], Record<string, string>]>([
    ["a pod claims its IPs", [[a, [], ["10.0.0.1", "10.0.0.2"]]], { "10.0.0.1": "a", "10.0.0.2": "a" }],
    [
      "the last claim wins",
      [
        [a, [], ["10.0.0.1"]],
        [b, [], ["10.0.0.1"]],
      ],
      { "10.0.0.1": "b" },
    ],
    [
      "a pod letting go of an IP another one claimed leaves it",
      [
        [a, [], ["10.0.0.1"]],
        [b, [], ["10.0.0.1"]],
        [a, ["10.0.0.1"], []],
      ],
      { "10.0.0.1": "b" },
    ],
    [
      "a moved IP leaves its old bucket",
      [
        [a, [], ["10.0.0.1"]],
        [a, ["10.0.0.1"], ["10.0.1.1"]],
      ],
      { "10.0.1.1": "a" },
    ],
    ["dual stack", [[a, [], ["10.0.0.1", "fd00:10:244:1::c"]]], { "10.0.0.1": "a", "fd00:10:244:1::c": "a" }],
  ])("%s", async (_name, steps, want) => {
    const store = createMemoryStore();
    for (const [p, before, after] of steps) await setPodIps(store, "east", p, before, after);
    const asked = ["10.0.0.1", "10.0.0.2", "10.0.1.1", "fd00:10:244:1::c", "10.9.9.9"];
    const found = await podsByIp(store, "east", new Set(asked));
    expect(Object.fromEntries([...found].map(([ip, o]) => [ip, o.name]))).toEqual(want);
    // A bucket emptied is deleted; every value left holds its entries sorted by IP.
    for (const e of await listAll<PodIpBucketPart>(store, "podips/")) {
      const refs = partEntries(e.value);
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.map((r) => r[0])).toEqual(refs.map((r) => r[0]).sort());
    }
  });

  it("an IP a bucket holds is one value per /24 (or /64), and another cluster's is apart", async () => {
    const store = createMemoryStore();
    await setPodIps(store, "east", a, [], ["10.0.0.1", "10.0.0.2", "10.0.1.1"]);
    await setPodIps(store, "west", b, [], ["10.0.0.1"]);
    expect((await listAll(store, "podips/")).map((e) => e.key)).toEqual([
      keys.podIpBucket("east", "10.0.0", 0),
      keys.podIpBucket("east", "10.0.1", 0),
      keys.podIpBucket("west", "10.0.0", 0),
    ]);
    expect((await podsByIp(store, "west", new Set(["10.0.0.1", "10.0.0.2"]))).get("10.0.0.1")).toEqual(b);
  });
});

describe("a slice whose endpoints name no pod", () => {
  const ips = Array.from({ length: 10 }, (_, i) => `10.244.1.${i + 1}`);
  const svc = event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }]));
  const want = ips.map((ip) => `${ip} spiffe://cluster.local/ns/default/sa/reviews`).sort();

  it("pods first: the slice is joined with them, reading one pod-IP value for its 10 endpoints", async () => {
    const store = createMemoryStore();
    const { counted, reads } = countingReads(store);
    await ingestInto(store)(svc, ...ips.map((ip) => event("ADDED", pod("reviews", "default", ip))));
    await ingestInto(counted)(event("ADDED", podlessSlice(...ips)));
    expect(reads).toEqual([keys.podIpBucket("east", "10.244.1", 0)]);
    expect(await served(store)).toEqual(want);
  });

  it("slice first: each pod arriving later reaches its endpoint", async () => {
    const store = createMemoryStore();
    const events = ingestInto(store);
    await events(svc, event("ADDED", podlessSlice(...ips)));
    expect(await served(store)).toEqual(ips.map((ip) => `${ip} `).sort());
    for (const ip of ips) await events(event("ADDED", pod("reviews", "default", ip)));
    expect(await served(store)).toEqual(want);
    // A pod deleted takes its identity off its endpoint again.
    await events(event("DELETED", pod("reviews", "default", ips[0] as string)));
    expect((await served(store)).filter((e) => e.endsWith(" "))).toEqual([`${ips[0]} `]);
  });
});

const stores = migrationStores("edgepilot-pod-ip-");

describe.each(stores)("migration of the one-key-per-IP layout, %s store", (_name, open) => {
  it("the first batch moves podip/ keys into buckets; a slice arriving then finds its pods by IP", async () => {
    const store = open();
    const ips = ["10.244.1.7", "10.244.1.8", "10.244.2.9"];
    await ingestInto(store)(
      event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
      ...ips.map((ip) => event("ADDED", pod("reviews", "default", ip))),
    );
    // Turn the pod IPs back into what an older version wrote.
    for (const e of await listAll<PodIpBucketPart>(store, "podips/")) {
      for (const [ip, namespace, name] of partEntries(e.value))
        await store.put(keys.podIp("east", ip), { namespace, name });
      await store.delete(e.key);
    }
    expect(await listAll(store, keys.podIpsUnbucketed())).toHaveLength(3);

    const lines: string[] = [];
    await ingestInto(store, lines)(event("ADDED", podlessSlice(...ips)));
    expect(lines).toEqual(["ingest: moved 3 pod IP key(s) of the previous layout into buckets"]);
    expect(await listAll(store, keys.podIpsUnbucketed())).toEqual([]);
    const found = await podsByIp(store, "east", new Set(ips));
    expect(ips.map((ip) => found.get(ip)?.name)).toEqual(ips.map((ip) => podName("reviews", ip)));
    expect(await served(store)).toEqual(
      ips.map((ip) => `${ip} spiffe://cluster.local/ns/default/sa/reviews`),
    );
    // Nothing left to move: a second migration is one empty listing.
    expect(await migrateUnbucketedPodIps(store)).toBe(0);
  });
});
