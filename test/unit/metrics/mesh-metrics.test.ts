/**
 * The metrics observer and the hooks it hangs on, without a server: the xDS reports reach every
 * observer (one that throws is logged and stops none), convergence is measured from the latest
 * push's first event, label values from outside are bounded, and the measuring Store decorator
 * counts every call while keeping the memory store's synchronous capabilities.
 */
import { describe, expect, it } from "vitest";
import { createMeshHooks, type Flush } from "../../../lib/core/hooks.ts";
import { type ApplySummary, validateEvents } from "../../../lib/ingest/index.ts";
import { createMeshMetrics, maxVersionLabels } from "../../../lib/metrics/mesh-metrics.ts";
import { createRegistry } from "../../../lib/metrics/registry.ts";
import { measureStore, sampleEvery } from "../../../lib/metrics/store-metrics.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { applyStagedWrites, isBulkWritable, isSyncReadable, readNow } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

/** A push flush whose first event came at `start`, changing `changes` resources. */
const flushOf = (start: number, changes = 1): Flush => ({
  kind: "done",
  version: 1,
  recovered: false,
  request: { full: true, start, configsUpdated: [], reasons: {} } as unknown as Flush["request"],
  changes: Array.from({ length: changes }, (_, i) => ({
    typeUrl: TypeUrl.cluster,
    name: `c${i}`,
    version: "v",
  })),
});

/** The sample lines of `name` in an exposition. */
const lines = (text: string, name: string) => text.split("\n").filter((l) => l.startsWith(name));

describe("mesh metrics through the hooks", () => {
  it("counts responses, ACKs and NACKs by istiod's type, other type URLs as other", async () => {
    const hooks = createMeshHooks(() => {});
    const { registry, observer } = createMeshMetrics(createRegistry());
    hooks.observe(observer);
    hooks.xds.response(TypeUrl.endpoint, 0.002, 0.001);
    hooks.xds.response("type.googleapis.com/some.Other", 0.5, undefined);
    hooks.xds.ack(TypeUrl.cluster);
    hooks.xds.nack(TypeUrl.listener);
    const text = await registry.expose();
    expect(lines(text, "pilot_xds_pushes{")).toEqual([
      'pilot_xds_pushes{type="cds"} 0',
      'pilot_xds_pushes{type="eds"} 1',
      'pilot_xds_pushes{type="lds"} 0',
      'pilot_xds_pushes{type="rds"} 0',
      'pilot_xds_pushes{type="sds"} 0',
      'pilot_xds_pushes{type="other"} 1',
    ]);
    expect(text).toContain("pilot_xds_send_time_count 1\n");
    expect(text).toContain('pilot_xds_push_time_bucket{type="eds",le="0.01"} 1\n');
    expect(text).toContain('edgepilot_xds_acks{type="cds"} 1\n');
    expect(text).toContain('pilot_total_xds_rejects{type="lds"} 1\n');
  });

  it("measures convergence from the latest push's first event, nothing before any push", async () => {
    const hooks = createMeshHooks(() => {});
    const { registry, observer } = createMeshMetrics(createRegistry());
    hooks.observe(observer);
    hooks.xds.converged(5_000);
    expect(await registry.expose()).toContain("pilot_proxy_convergence_time_count 0\n");
    hooks.push({ flush: flushOf(1_000), latencyMs: 0, streams: 1 });
    hooks.xds.converged(3_500);
    const text = await registry.expose();
    expect(text).toContain('pilot_proxy_convergence_time_bucket{le="1"} 0\n');
    expect(text).toContain('pilot_proxy_convergence_time_bucket{le="3"} 1\n');
    expect(text).toContain("pilot_proxy_convergence_time_sum 2.5\n");
  });

  it("tracks pilot_xds by ISTIO_VERSION, bounded in count and length", async () => {
    const hooks = createMeshHooks(() => {});
    const { registry, observer } = createMeshMetrics(createRegistry());
    hooks.observe(observer);
    for (let i = 0; i < maxVersionLabels + 5; i++) hooks.xds.streamOpened("delta", `1.${i}.0`);
    hooks.xds.streamOpened("sotw", "x".repeat(500));
    hooks.xds.streamClosed("delta", "1.0.0");
    const text = await registry.expose();
    const xds = lines(text, "pilot_xds{");
    expect(xds).toHaveLength(maxVersionLabels + 1);
    expect(xds).toContain('pilot_xds{version="1.0.0"} 0');
    expect(xds).toContain('pilot_xds{version="other"} 6');
    expect(text).toContain('edgepilot_xds_streams{kind="delta"} 36\n');
    expect(text).toContain('edgepilot_xds_streams{kind="sotw"} 1\n');
  });

  it("logs an observer that throws and still tells the others", () => {
    const logged: string[] = [];
    const hooks = createMeshHooks((line) => logged.push(line));
    let heard = 0;
    hooks.observe({
      onNack() {
        throw new Error("boom");
      },
    });
    const stop = hooks.observe({ onNack: () => heard++ });
    hooks.xds.nack(TypeUrl.route);
    expect(heard).toBe(1);
    expect(logged).toEqual([`core: an onNack observer failed: "boom"`]);
    stop();
    hooks.xds.nack(TypeUrl.route);
    expect(heard).toBe(1);
  });
});

describe("the measuring Store decorator", () => {
  it("counts each call, times one in sampleEvery, and keeps readNow and the bulk commit", async () => {
    const registry = createRegistry();
    const store = measureStore(createMemoryStore(), registry);
    for (let i = 0; i < sampleEvery - 1; i++) await store.get("a/none");
    await store.put("a/1", { n: 1 });
    await store.get("a/1");
    await store.getMany(["a/1", "a/2"]);
    await store.list("a/");
    await store.delete("a/1");
    expect(isSyncReadable(store) && isBulkWritable(store)).toBe(true);
    if (!isSyncReadable(store) || !isBulkWritable(store)) return;
    store[applyStagedWrites]([{ key: "b/1", value: 2, version: 1 }]);
    expect(store[readNow]("b/1")?.value).toBe(2);
    expect((await store.get("b/1"))?.value).toBe(2);
    const text = await registry.expose();
    for (const [op, n] of [
      ["get", sampleEvery + 1],
      ["getMany", 1],
      ["put", 1],
      ["delete", 1],
      ["list", 1],
      ["readNow", 1],
      ["commit", 1],
    ] as const) {
      expect(text).toContain(`edgepilot_store_operations{op="${op}"} ${n}\n`);
      if (op !== "readNow") {
        const timed = op === "commit" ? 1 : Math.floor(n / sampleEvery);
        expect(text).toContain(`edgepilot_store_seconds_count{op="${op}"} ${timed}\n`);
      }
    }
  });
});

describe("config events by kind", () => {
  it("count both Gateways under istiod's informer name Gateway, each Gateway API kind under its own", async () => {
    const { registry, observer } = createMeshMetrics(createRegistry());
    const gateway = (apiVersion: string, name: string) => ({
      apiVersion,
      kind: "Gateway",
      metadata: { name },
    });
    const validated = validateEvents([
      {
        type: "ADDED",
        object: {
          ...gateway("networking.istio.io/v1", "a"),
          metadata: { name: "a", namespace: "d" },
          spec: { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
        },
      },
      {
        type: "ADDED",
        object: {
          ...gateway("gateway.networking.k8s.io/v1", "a"),
          metadata: { name: "a", namespace: "d" },
          spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
        },
      },
      {
        type: "ADDED",
        object: {
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "GatewayClass",
          metadata: { name: "istio" },
          spec: { controllerName: "istio.io/gateway-controller" },
        },
      },
    ]);
    if (!validated.ok) throw new Error("invalid test events");
    const summary = { rejected: [], applied: 0, unchanged: 0, stale: 0 } as unknown as ApplySummary;
    observer.onIngest?.({ call: "events", cluster: "c", summary, events: validated.value });
    observer.onIngest?.({
      call: "resync",
      cluster: "c",
      kind: "KubernetesGateway",
      summary: { ...summary, listed: { add: 1, update: 0, delete: 0 } } as ApplySummary,
    });
    const text = await registry.expose();
    expect(lines(text, 'pilot_k8s_cfg_events{type="Gateway"')).toEqual([
      'pilot_k8s_cfg_events{type="Gateway",event="add"} 3',
    ]);
    expect(text).toContain('pilot_k8s_cfg_events{type="GatewayClass",event="add"} 1\n');
  });
});
