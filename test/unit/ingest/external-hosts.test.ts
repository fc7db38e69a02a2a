/**
 * VirtualService hosts that are not in Kubernetes form find the services they touch through the
 * ServiceEntry host index (lib/ingest/external-hosts.ts), not by listing every service: the push
 * names exactly the declaring namespaces' services, and only a wildcard host lists services. A store
 * written before the index is indexed by its first batch (memory and file stores).
 */
import { describe, expect, it } from "vitest";
import type { QueuedPush } from "../../../lib/push/queue.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { event as ev, service } from "../../e2e/support/kube.ts";
import { ingestInto, migrationStores } from "./migration-stores.ts";
import { serviceEntry, virtualService } from "./support/istio.ts";

const grpc = [{ name: "grpc", port: 9080 }];
/** A ServiceEntry `name` of namespace `ns` declaring `hosts`. */
const se = (name: string, ns: string, hosts: string[], rv = "1") =>
  serviceEntry(name, { hosts, endpoints: [{ address: "10.1.0.1" }] }, { namespace: ns, resourceVersion: rv });
const vs = (hosts: string[], rv = "1") =>
  virtualService(
    "routes",
    { http: [{ route: [{ destination: { host: hosts[0] } }] }] },
    { hosts, resourceVersion: rv },
  );

/** Counts the listings of every service (keys.services()). */
function countingLists(store: Store) {
  const lists: string[] = [];
  const counted: Store = {
    ...store,
    list: (prefix, o) => {
      if (prefix === keys.services()) lists.push(prefix);
      return store.list(prefix, o);
    },
  };
  return { store: counted, lists };
}

/** The services the queued pushes name (serviceConfigKey: kind ServiceEntry), sorted. */
async function servicesNamed(store: Store): Promise<string[]> {
  const named = new Set<string>();
  for (const e of await listAll<QueuedPush>(store, keys.pendingPrefix()))
    for (const k of e.value.request.configsUpdated ?? []) if (k.startsWith("ServiceEntry/")) named.add(k);
  return [...named].sort();
}

interface Case {
  name: string;
  before: unknown[];
  event: unknown;
  services: string[];
  /** Whether the event listed every service. */
  scanned: boolean;
}

const cases: Case[] = [
  {
    name: "an SE host declared in two namespaces: both, without listing services",
    before: [
      ev("ADDED", se("api", "ext", ["api.example.com"])),
      ev("ADDED", se("api", "other", ["api.example.com"])),
    ],
    event: ev("ADDED", vs(["api.example.com"])),
    services: ["ServiceEntry/ext/api.example.com", "ServiceEntry/other/api.example.com"],
    scanned: false,
  },
  {
    name: "a host no ServiceEntry declares: no service, no listing",
    before: [ev("ADDED", se("api", "ext", ["api.example.com"]))],
    event: ev("ADDED", vs(["ghost.example.com"])),
    services: [],
    scanned: false,
  },
  {
    name: "a host an entry stopped declaring: gone from the index",
    before: [
      ev("ADDED", se("api", "ext", ["api.example.com"])),
      ev("MODIFIED", se("api", "ext", ["b.example.com"], "2")),
    ],
    event: ev("ADDED", vs(["api.example.com"])),
    services: [],
    scanned: false,
  },
  {
    name: "a deleted entry: gone from the index",
    before: [
      ev("ADDED", se("api", "ext", ["api.example.com"])),
      ev("DELETED", se("api", "ext", ["api.example.com"], "2")),
    ],
    event: ev("ADDED", vs(["api.example.com"])),
    services: [],
    scanned: false,
  },
  {
    name: "a Kubernetes-form host also declared by an entry of another namespace: both namespaces",
    before: [
      ev("ADDED", service("reviews", "default", grpc)),
      ev("ADDED", se("reviews", "other", ["reviews.default.svc.cluster.local"])),
    ],
    event: ev("ADDED", vs(["reviews.default.svc.cluster.local"])),
    services: [
      "ServiceEntry/default/reviews.default.svc.cluster.local",
      "ServiceEntry/other/reviews.default.svc.cluster.local",
    ],
    scanned: false,
  },
  {
    name: "a wildcard host still lists the services it may match",
    before: [
      ev("ADDED", se("api", "ext", ["api.example.com"])),
      ev("ADDED", service("reviews", "default", grpc)),
    ],
    event: ev("ADDED", vs(["*.example.com"])),
    services: ["ServiceEntry/ext/api.example.com"],
    scanned: true,
  },
];

describe("VirtualService hosts through the ServiceEntry host index", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const { store, lists } = countingLists(createMemoryStore());
      const ingest = ingestInto(store);
      await ingest(...c.before);
      for (const e of await listAll(store, keys.pendingPrefix())) await store.delete(e.key);
      lists.length = 0;
      await ingest(c.event);
      expect(await servicesNamed(store)).toEqual(c.services);
      expect(lists.length > 0).toBe(c.scanned);
    });
  }
});

describe.each(
  migrationStores("edgepilot-sehosts-"),
)("the host index of an older store, %s store", (_name, open) => {
  it("the first batch indexes the stored ServiceEntry records (logged once); a VirtualService then finds them", async () => {
    const store = open();
    await ingestInto(store)(ev("ADDED", se("api", "ext", ["api.example.com", "b.example.com"])));
    // What an older version left: the records, no index and no mark.
    for (const e of await listAll(store, "sehosts/")) await store.delete(e.key);
    await store.delete(keys.externalHostIndex());
    for (const e of await listAll(store, keys.pendingPrefix())) await store.delete(e.key);

    const lines: string[] = [];
    const ingest = ingestInto(store, lines);
    await ingest(ev("ADDED", vs(["api.example.com"])));
    expect(lines).toEqual(["ingest: indexed the hosts of 2 ServiceEntry service record(s)"]);
    expect(await servicesNamed(store)).toEqual(["ServiceEntry/ext/api.example.com"]);
    await ingestInto(store, lines)(ev("ADDED", vs(["b.example.com"], "2")));
    expect(lines).toHaveLength(1);
  });
});
