/**
 * An endpoint's explicit network at ingest: its pod's topology.istio.io/network label, else its
 * namespace's. A namespace label change re-derives the namespace's shards; on the system namespace
 * it also queues a push naming it (the flush resolves the cluster's network from it).
 */
import { describe, expect, it } from "vitest";
import { createIngestCore } from "../../../lib/core/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice, event, pod, service } from "../../e2e/support/kube.ts";

const NET = "topology.istio.io/network";
const host = "reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };

function ingest(store: Store) {
  const core = createIngestCore({ store, now: () => 1_000, registry: defaultRegistryOptions, log: () => {} });
  return async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    return core.events("east", v.value);
  };
}

const namespace = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels },
});
const labelledPod = (ip: string, network?: string) => {
  const p = pod("reviews", "default", ip);
  if (network) (p.metadata.labels as Record<string, string>)[NET] = network;
  return p;
};
const slice = (...ips: string[]) =>
  endpointSlice(
    "reviews-1",
    "reviews",
    "default",
    port,
    ips.map((ip) => ({ ip, ready: true })),
  );

async function networks(store: Store): Promise<Record<string, string | undefined>> {
  const record = (await store.get<EndpointShardsRecord>(keys.shards("default", host)))?.value;
  const out: Record<string, string | undefined> = {};
  for (const eps of Object.values(record?.shards ?? {})) for (const e of eps) out[e.address] = e.network;
  return out;
}

describe("an endpoint's network at ingest", () => {
  it("the pod's label wins over the namespace's; neither: no network (resolved at generation)", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(
      event("ADDED", namespace("default", { [NET]: "ns-net" })),
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", labelledPod("10.0.0.1", "pod-net")),
      event("ADDED", labelledPod("10.0.0.2")),
      event("ADDED", slice("10.0.0.1", "10.0.0.2")),
    );
    expect(await networks(store)).toEqual({ "10.0.0.1": "pod-net", "10.0.0.2": "ns-net" });
    // The namespace loses its label: its endpoints are joined again.
    await events(event("MODIFIED", namespace("default")));
    expect(await networks(store)).toEqual({ "10.0.0.1": "pod-net", "10.0.0.2": undefined });
  });

  it("a pod relabelled changes its endpoints' network", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", labelledPod("10.0.0.1")),
      event("ADDED", slice("10.0.0.1")),
    );
    expect(await networks(store)).toEqual({ "10.0.0.1": undefined });
    await events(event("MODIFIED", labelledPod("10.0.0.1", "pod-net")));
    expect(await networks(store)).toEqual({ "10.0.0.1": "pod-net" });
  });

  it("a namespace labelled with a network re-derives its endpoints and pushes them", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(
      event("ADDED", namespace("default")),
      event("ADDED", service("reviews", "default", [port])),
      event("ADDED", labelledPod("10.0.0.1")),
      event("ADDED", slice("10.0.0.1")),
    );
    for (const q of await readQueue(store)) await store.delete(q.key);
    await events(event("MODIFIED", namespace("default", { [NET]: "ns-net" })));
    expect(await networks(store)).toEqual({ "10.0.0.1": "ns-net" });
    const queued = await readQueue(store);
    expect(queued.map((q) => q.request.full)).toEqual([false]);
    // Another label changes no network: nothing is joined again, nothing pushed.
    for (const q of queued) await store.delete(q.key);
    await events(event("MODIFIED", namespace("default", { [NET]: "ns-net", team: "a" })));
    expect(await readQueue(store)).toEqual([]);
  });

  it("the system namespace's label queues a full push naming it; another namespace's does not", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(event("ADDED", namespace("istio-system", { [NET]: "east" })));
    expect((await readQueue(store)).map((q) => q.request.configsUpdated)).toEqual([
      ["Namespace/istio-system/istio-system"],
    ]);
    for (const q of await readQueue(store)) await store.delete(q.key);
    await events(event("ADDED", namespace("apps", { [NET]: "east" })));
    expect(await readQueue(store)).toEqual([]);
  });
});
