/**
 * ServiceEntry and WorkloadEntry through the real ingest (memory store, manual clock): what is
 * stored (config, External service records, the External shard) and the push each change needs
 * (Full vs EDS, unchanged UPDATE, relabel out of a selector, DELETE, stale).
 */
import { describe, expect, it } from "vitest";
import type { ExternalService } from "../../../lib/registry/istio/external-services.ts";
import { keys } from "../../../lib/store/index.ts";
import { event as ev, pod } from "../../e2e/support/kube.ts";
import { createHarness } from "./support/harness.ts";
import { serviceEntry, workloadEntry } from "./support/istio.ts";

const host = "pay.example.com";
const shardKey = "External/east";

const se = (rv: string, spec: Record<string, unknown> = {}) =>
  serviceEntry("pay", spec, { resourceVersion: rv });
const staticSe = (rv: string, ...ips: string[]) => se(rv, { endpoints: ips.map((address) => ({ address })) });
const selecting = (rv: string, spec: Record<string, unknown> = {}) =>
  se(rv, { workloadSelector: { labels: { app: "pay" } }, ...spec });
const we = (name: string, ip: string, app: string, rv = "1", metaLabels?: Record<string, string>) =>
  workloadEntry(name, { address: ip, labels: { app } }, "default", {
    resourceVersion: rv,
    ...(metaLabels && { labels: metaLabels }),
  });

/** A running Pod labelled app=`app` at `ip` (name fixed per ip, so a MODIFIED relabels it). */
const podOf = (app: string, ip: string) => {
  const p = pod("pay", "default", ip);
  return { ...p, metadata: { ...p.metadata, labels: { app } } };
};

/** pay-a running as service account `pay`, as the pods do (so pods joining change no identity). */
const payA = () =>
  workloadEntry("pay-a", { address: "10.2.0.1", labels: { app: "pay" }, serviceAccount: "pay" }, "default");

interface Case {
  name: string;
  /** Applied (and pushed) first. */
  before: unknown[];
  events: unknown[];
  summary: { applied?: number; unchanged?: number; stale?: number };
  /** The batch's push: null for none. */
  push: { full: boolean; configs: number } | null;
  /** Addresses in the External shard of pay.example.com; undefined: no shard record at all. */
  shard: string[] | undefined;
  /** Whether the ServiceEntry's record of pay.example.com is stored. */
  record: boolean;
}

const cases: Case[] = [
  {
    name: "a STATIC ServiceEntry: Full push naming its host, record and endpoints stored",
    before: [],
    events: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.1.0.1"],
    record: true,
  },
  {
    name: "an UPDATE with an unchanged spec pushes nothing",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [ev("MODIFIED", staticSe("2", "10.1.0.1"))],
    summary: { unchanged: 1 },
    push: null,
    shard: ["10.1.0.1"],
    record: true,
  },
  {
    name: "an UPDATE changing only endpoints is an EDS push",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [ev("MODIFIED", staticSe("2", "10.1.0.1", "10.1.0.2"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.1.0.1", "10.1.0.2"],
    record: true,
  },
  {
    name: "an UPDATE changing a port is Full",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [
      ev(
        "MODIFIED",
        se("2", { endpoints: [{ address: "10.1.0.1" }], ports: [{ name: "grpc", number: 9090 }] }),
      ),
    ],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.1.0.1"],
    record: true,
  },
  {
    name: "a host dropped from hosts leaves: Full for old ∪ new, its record and shard gone",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [ev("MODIFIED", se("2", { hosts: ["other.example.com"], endpoints: [{ address: "10.1.0.1" }] }))],
    summary: { applied: 1 },
    push: { full: true, configs: 2 },
    shard: undefined,
    record: false,
  },
  {
    name: "a DELETE: Full, record and shard gone",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [ev("DELETED", staticSe("2", "10.1.0.1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: undefined,
    record: false,
  },
  {
    name: "a replayed ServiceEntry is stale",
    before: [ev("ADDED", staticSe("5", "10.1.0.1"))],
    events: [ev("MODIFIED", staticSe("4", "10.1.0.9"))],
    summary: { stale: 1 },
    push: null,
    shard: ["10.1.0.1"],
    record: true,
  },
  {
    name: "a first WorkloadEntry selected: a new shard, Full",
    before: [ev("ADDED", selecting("1"))],
    events: [ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a second WorkloadEntry selected: EDS",
    before: [ev("ADDED", selecting("1")), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("ADDED", we("pay-b", "10.2.0.2", "pay"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1", "10.2.0.2"],
    record: true,
  },
  {
    name: "a WorkloadEntry relabelled out of the selector leaves: EDS",
    before: [
      ev("ADDED", selecting("1")),
      ev("ADDED", we("pay-a", "10.2.0.1", "pay")),
      ev("ADDED", we("pay-b", "10.2.0.2", "pay")),
    ],
    events: [ev("MODIFIED", we("pay-b", "10.2.0.2", "other", "2"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "metadata labels override spec labels: relabelled out through metadata",
    before: [ev("ADDED", selecting("1")), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("MODIFIED", we("pay-a", "10.2.0.1", "pay", "2", { app: "other" }))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: [],
    record: true,
  },
  {
    name: "two WorkloadEntries on one address: deleting one keeps the endpoint (rebuilt, not subtracted)",
    before: [
      ev("ADDED", selecting("1")),
      ev("ADDED", we("pay-a", "10.2.0.1", "pay")),
      ev("ADDED", we("pay-a2", "10.2.0.1", "pay")),
    ],
    events: [ev("DELETED", we("pay-a2", "10.2.0.1", "pay", "2"))],
    summary: { applied: 1 },
    push: null,
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a WorkloadEntry on an inline endpoint's address of another entry of the host is rebuilt too",
    before: [
      ev("ADDED", selecting("1")),
      ev("ADDED", serviceEntry("pay-static", { hosts: [host], endpoints: [{ address: "10.2.0.1" }] })),
      ev("ADDED", we("pay-a", "10.2.0.1", "pay")),
    ],
    events: [ev("DELETED", we("pay-a", "10.2.0.1", "pay", "2"))],
    summary: { applied: 1 },
    // The inline endpoint (other labels) is what is left: changed, EDS.
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a WorkloadEntry UPDATE with unchanged spec and labels pushes nothing",
    before: [ev("ADDED", selecting("1")), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("MODIFIED", we("pay-a", "10.2.0.1", "pay", "2"))],
    summary: { unchanged: 1 },
    push: null,
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a WorkloadEntry no ServiceEntry selects is stored and pushes nothing",
    before: [ev("ADDED", selecting("1"))],
    events: [ev("ADDED", we("misc", "10.2.0.9", "misc"))],
    summary: { applied: 1 },
    push: null,
    shard: undefined,
    record: true,
  },
  {
    name: "a deleted WorkloadEntry leaves: EDS, the shard dropped but its key kept",
    before: [ev("ADDED", selecting("1")), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("DELETED", we("pay-a", "10.2.0.1", "pay", "2"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: [],
    record: true,
  },
  {
    name: "a WorkloadEntry change of a DNS ServiceEntry is Full (its endpoint lives in the Cluster)",
    before: [ev("ADDED", selecting("1", { resolution: "DNS" })), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("MODIFIED", we("pay-a", "10.2.0.7", "pay", "2"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.2.0.7"],
    record: true,
  },
  {
    name: "a Pod with a service account new to the shard: Full (as Istio)",
    before: [ev("ADDED", selecting("1")), ev("ADDED", we("pay-a", "10.2.0.1", "pay"))],
    events: [ev("ADDED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.2.0.1", "10.3.0.1"],
    record: true,
  },
  {
    name: "a Pod a workloadSelector selects joins: a new shard, Full",
    before: [ev("ADDED", selecting("1"))],
    events: [ev("ADDED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.3.0.1"],
    record: true,
  },
  {
    name: "a Pod beside a WorkloadEntry: EDS; both serve",
    before: [ev("ADDED", selecting("1")), ev("ADDED", payA())],
    events: [ev("ADDED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1", "10.3.0.1"],
    record: true,
  },
  {
    name: "a Pod relabelled out of the selector leaves: EDS",
    before: [ev("ADDED", selecting("1")), ev("ADDED", payA()), ev("ADDED", podOf("pay", "10.3.0.1"))],
    events: [ev("MODIFIED", podOf("other", "10.3.0.1"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a deleted Pod leaves: EDS",
    before: [ev("ADDED", selecting("1")), ev("ADDED", payA()), ev("ADDED", podOf("pay", "10.3.0.1"))],
    events: [ev("DELETED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 1 },
    push: { full: false, configs: 1 },
    shard: ["10.2.0.1"],
    record: true,
  },
  {
    name: "a Pod where no entry selects workloads is a Kubernetes matter only (no push without a slice)",
    before: [ev("ADDED", staticSe("1", "10.1.0.1"))],
    events: [ev("ADDED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 1 },
    push: null,
    shard: ["10.1.0.1"],
    record: true,
  },
  {
    name: "a ServiceEntry after the Pods it selects picks them up",
    before: [ev("ADDED", podOf("pay", "10.3.0.1")), ev("ADDED", podOf("misc", "10.3.0.2"))],
    events: [ev("ADDED", selecting("1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.3.0.1"],
    record: true,
  },
  {
    name: "a ServiceEntry and the Pod it selects in one batch",
    before: [],
    events: [ev("ADDED", selecting("1")), ev("ADDED", podOf("pay", "10.3.0.1"))],
    summary: { applied: 2 },
    push: { full: true, configs: 1 },
    shard: ["10.3.0.1"],
    record: true,
  },
  {
    name: "a ServiceEntry after its WorkloadEntries picks them up",
    before: [ev("ADDED", we("pay-a", "10.2.0.1", "pay")), ev("ADDED", we("pay-b", "10.2.0.2", "pay"))],
    events: [ev("ADDED", selecting("1"))],
    summary: { applied: 1 },
    push: { full: true, configs: 1 },
    shard: ["10.2.0.1", "10.2.0.2"],
    record: true,
  },
];

describe("ServiceEntry and WorkloadEntry ingest", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const h = createHarness();
      if (c.before.length > 0) {
        await h.ingest(...c.before);
        await h.settle();
      }
      const summary = await h.ingest(...c.events);
      expect(summary).toMatchObject({ applied: 0, unchanged: 0, stale: 0, ...c.summary });
      expect(summary.push).toEqual(c.push);
      const shards = await h.shards("default", host);
      expect(shards && (shards[shardKey] ?? []).map((e) => e.address)).toEqual(c.shard);
      const record = await h.store.get(keys.externalService("default", host, "east", "pay"));
      expect(record !== undefined).toBe(c.record);
    });
  }

  it("stores the config and one External record per host, tagged with its ServiceEntry", async () => {
    const h = createHarness();
    await h.ingest(
      ev(
        "ADDED",
        se("1", { hosts: ["a.example.com", "b.example.com"], endpoints: [{ address: "10.1.0.1" }] }),
      ),
    );
    expect(await h.store.get(keys.config("ServiceEntry", "default", "pay", "east"))).toBeDefined();
    for (const hostname of ["a.example.com", "b.example.com"]) {
      const r = await h.store.get<ExternalService>(keys.externalService("default", hostname, "east", "pay"));
      expect(r?.value).toMatchObject({
        hostname,
        namespace: "default",
        clusterId: "east",
        resolution: "ClientSideLB",
      });
      expect(r?.value.serviceEntry.name).toBe("pay");
      expect(Object.keys((await h.shards("default", hostname)) ?? {})).toEqual([shardKey]);
    }
  });

  it("a Kubernetes Service of the same host and cluster keeps its own record", async () => {
    const h = createHarness();
    const kubeHost = "pay.default.svc.cluster.local";
    await h.ingest(
      ev("ADDED", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "pay", namespace: "default", resourceVersion: "1" },
        spec: { clusterIP: "10.96.0.9", ports: [{ name: "grpc", port: 9080 }] },
      }),
      ev("ADDED", se("1", { hosts: [kubeHost], endpoints: [{ address: "10.1.0.1" }] })),
    );
    expect(await h.store.get(keys.service("default", kubeHost, "east"))).toBeDefined();
    expect(await h.store.get(keys.externalService("default", kubeHost, "east", "pay"))).toBeDefined();
  });

  it("a selected Pod serves at its IP with its service account and its Node's locality", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name: "node-1",
          resourceVersion: "1",
          labels: { "topology.kubernetes.io/region": "eu", "topology.kubernetes.io/zone": "eu-a" },
        },
      }),
      ev("ADDED", selecting("1")),
      ev("ADDED", podOf("pay", "10.3.0.1")),
    );
    const [e] = (await h.shards("default", host))?.[shardKey] ?? [];
    expect(e).toMatchObject({
      address: "10.3.0.1",
      port: 9080,
      serviceAccount: "spiffe://cluster.local/ns/default/sa/pay",
      locality: { region: "eu", zone: "eu-a", subzone: "" },
    });
    expect(e?.labels).toMatchObject({ app: "pay" });
  });

  it("a resync whose list lacks a WorkloadEntry deletes it: it leaves the ServiceEntry (EDS)", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", selecting("1")),
      ev("ADDED", we("pay-a", "10.2.0.1", "pay")),
      ev("ADDED", we("pay-b", "10.2.0.2", "pay")),
    );
    await h.settle();
    const summary = await h.resync("WorkloadEntry", [we("pay-a", "10.2.0.1", "pay")], "50");
    expect(summary).toMatchObject({ deleted: 1, push: { full: false, configs: 1 } });
    expect(((await h.shards("default", host))?.[shardKey] ?? []).map((e) => e.address)).toEqual(["10.2.0.1"]);
    await h.settle();
    expect((await h.served(host))?.map((e) => e.address)).toEqual(["10.2.0.1"]);
  });

  it("lists unsupported fields once in the summary", async () => {
    const h = createHarness();
    const summary = await h.ingest(
      ev("ADDED", se("1", { endpoints: [{ address: "unix:///var/run/pay.sock" }] })),
      ev("ADDED", workloadEntry("w", { address: "", network: "n1" })),
    );
    expect(summary.unsupported).toEqual([
      "ServiceEntry default/pay: spec.endpoints[0].address",
      "WorkloadEntry default/w: spec.address",
    ]);
  });
});
