/**
 * The Istio Gateway handler: each cluster's copy stored under keys.config("Gateway", …); as
 * istiod's needsPush, an UPDATE with an unchanged spec queues nothing, a change (or a delete)
 * queues a Full push naming `Gateway/<ns>/<name>` alone, and the flush publishes no shared resource
 * for it but announces it as a refresh (gateway proxies' snapshots go stale).
 */
import { describe, expect, it } from "vitest";
import { createIngestCore } from "../../../lib/core/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { pushRequest } from "../../../lib/model/index.ts";
import { needsRefresh } from "../../../lib/push/push-refresh.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import { servicesInScope } from "../../../lib/push/scope.ts";
import type { StoredConfig } from "../../../lib/registry/istio/stored.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { event, service } from "../../e2e/support/kube.ts";

function ingest(store: Store) {
  const core = createIngestCore({ store, now: () => 1_000, registry: defaultRegistryOptions, log: () => {} });
  return async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    return core.events("east", v.value);
  };
}

const gateway = (spec: Record<string, unknown>, resourceVersion: string) => ({
  apiVersion: "networking.istio.io/v1beta1",
  kind: "Gateway",
  metadata: { name: "public", namespace: "istio-system", resourceVersion },
  spec: { selector: { istio: "ingressgateway" }, ...spec },
});
const http = { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] };

describe("the Istio Gateway handler", () => {
  it("stores the Gateway and queues a Full push naming it alone", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(event("ADDED", gateway({ servers: [http] }, "1")));
    const stored = await store.get<StoredConfig<"Gateway">>(
      keys.config("Gateway", "istio-system", "public", "east"),
    );
    expect(stored?.value).toMatchObject({ kind: "Gateway", spec: { servers: [http] } });
    expect((await readQueue(store)).map((q) => [q.request.full, q.request.configsUpdated])).toEqual([
      [true, ["Gateway/istio-system/public"]],
    ]);
  });

  it("an UPDATE with the same spec queues nothing; a changed spec and a delete queue a push each", async () => {
    const store = createMemoryStore();
    const events = ingest(store);
    await events(event("ADDED", gateway({ servers: [http] }, "1")));
    for (const q of await readQueue(store)) await store.delete(q.key);
    await events(event("MODIFIED", gateway({ servers: [http] }, "2")));
    expect(await readQueue(store)).toEqual([]);
    await events(event("MODIFIED", gateway({ servers: [{ ...http, hosts: ["a.example.com"] }] }, "3")));
    await events(event("DELETED", gateway({ servers: [{ ...http, hosts: ["a.example.com"] }] }, "4")));
    expect((await readQueue(store)).map((q) => q.request.configsUpdated)).toEqual([
      ["Gateway/istio-system/public"],
      ["Gateway/istio-system/public"],
    ]);
    expect(await store.get(keys.config("Gateway", "istio-system", "public", "east"))).toBeUndefined();
  });

  it("its push regenerates no service and is announced as a refresh", async () => {
    const store = createMemoryStore();
    await ingest(store)(event("ADDED", service("reviews", "default", [{ name: "http", port: 9080 }])));
    const request = pushRequest({
      full: true,
      configs: ["Gateway/istio-system/public"],
      reason: "config",
      start: 1,
    });
    expect(await servicesInScope(store, request, "istio-system")).toEqual([]);
    expect(needsRefresh(request, [])).toBe(true);
  });
});
