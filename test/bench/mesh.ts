/** Builds a mesh of N services (each: a Service, 3 Pods, one EndpointSlice) in a store (memory unless given), as ingest would. */
import { applyEvents, defaultRegistryOptions, validateEvents } from "../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../lib/push/run.ts";
import { generators } from "../../lib/resources/generators/index.ts";
import type { Store } from "../../lib/store/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";

let revision = 1;
const rv = () => String(++revision);
const ns = "bench";

function ip(service: number, i: number): string {
  return `10.${Math.floor(service / 250)}.${service % 250}.${i + 1}`;
}

/** The watch events that create service `n` with 3 ready endpoints. */
export function serviceEvents(n: number): unknown[] {
  const name = `svc-${n}`;
  const pods = [0, 1, 2].map((i) => ({
    type: "ADDED",
    object: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${name}-${i}`, namespace: ns, resourceVersion: rv(), labels: { app: name } },
      spec: { serviceAccountName: name, nodeName: "node-a" },
      status: { phase: "Running", podIP: ip(n, i), podIPs: [{ ip: ip(n, i) }] },
    },
  }));
  return [
    ...pods,
    {
      type: "ADDED",
      object: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: ns, resourceVersion: rv() },
        spec: { clusterIP: `10.96.${Math.floor(n / 250)}.${n % 250}`, ports: [{ name: "grpc", port: 9080 }] },
      },
    },
    sliceEvent(
      n,
      [0, 1, 2].map((i) => ip(n, i)),
      "ADDED",
    ),
  ];
}

/** One EndpointSlice of service `n` with the given ready addresses. */
export function sliceEvent(n: number, ips: string[], type: "ADDED" | "MODIFIED") {
  const name = `svc-${n}`;
  return {
    type,
    object: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `${name}-abcde`,
        namespace: ns,
        resourceVersion: rv(),
        labels: { "kubernetes.io/service-name": name },
      },
      addressType: "IPv4",
      endpoints: ips.map((a, i) => ({
        addresses: [a],
        conditions: { ready: true },
        targetRef: { kind: "Pod", namespace: ns, name: `${name}-${i}` },
      })),
      ports: [{ name: "grpc", port: 9080 }],
    },
  };
}

export const hostOf = (n: number) => `svc-${n}.${ns}.svc.cluster.local`;

/** A store holding the published mesh, and a function that ingests and pushes (returns the time it took). */
export async function buildMesh(services: number, store: Store = createMemoryStore()) {
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const deps = { store, now, registry: defaultRegistryOptions };
  const flushDeps = { store, generators, context: { domainSuffix: "cluster.local" }, now };
  async function ingestAndPush(events: unknown[]) {
    const v = validateEvents(events);
    if (!v.ok) throw new Error(v.error.message);
    const started = performance.now();
    await applyEvents(deps, "bench", v.value);
    clock += defaultDebounceOptions.debounceAfter;
    const turn = await runDebounceTurn(flushDeps, defaultDebounceOptions);
    return { ms: performance.now() - started, flushes: turn.flushes };
  }
  for (let n = 0; n < services; n += 100) {
    const batch = [];
    for (let k = n; k < Math.min(services, n + 100); k++) batch.push(...serviceEvents(k));
    await ingestAndPush(batch);
  }
  return { store, ingestAndPush };
}
