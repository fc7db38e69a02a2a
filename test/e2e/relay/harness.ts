/** Starts a relay in this process against a fake API server and a recording receiver, with object builders. */

import { allowPlainHttp } from "../../../functions/node/relay/kubeconfig.ts";
import { createRelay, type Relay, type RelayOptions } from "../../../functions/node/relay/relay.ts";
import type { RelayConfig } from "../../../lib/relay/config.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import type { KubeObj } from "./fake-resources.ts";
import { eventually, type Receiver, startReceiver } from "./receiver.ts";

/** A fake API server, a receiver, and a relay between them. */
export interface Harness {
  api: FakeApiServer;
  rx: Receiver;
  relay: Relay;
  logs: string[];
  /** Waits until the initial resync of every core kind was accepted. */
  synced(kinds?: string[]): Promise<void>;
  close(): Promise<void>;
}

/** The core kinds, as resynced. */
export const coreKindNames = ["Namespace", "Node", "Service", "EndpointSlice", "Pod", "ConfigMap"];

/**
 * Starts the harness. `seed` runs before the relay starts. Defaults: periodic resync off, a 20ms batch
 * delay, list pages of 2 items (so paging is exercised), backoff 20ms ▶ 200ms.
 */
export async function startHarness(
  config: Partial<RelayConfig> = {},
  seed: (api: FakeApiServer) => void = () => {},
): Promise<Harness> {
  const api = await startFakeApiServer();
  const rx = await startReceiver();
  seed(api);
  const logs: string[] = [];
  const relay = createRelay({
    kc: allowPlainHttp(api.kubeConfig()),
    config: {
      url: rx.url,
      token: rx.token,
      clusterId: "test-1",
      healthPort: undefined,
      healthHost: "127.0.0.1",
      istioNamespace: "istio-system",
      resyncPeriodMs: 0,
      batchSize: 500,
      batchDelayMs: 20,
      maxQueuedEvents: 10_000,
      listPageSize: 2,
      watchEndpoints: false,
      watchIstio: true,
      discoveryIntervalMs: 0,
      shutdownTimeoutMs: 2000,
      statusIntervalMs: 0,
      logEvents: false,
      ...config,
    },
    log: (line) => logs.push(line),
    backoff: { initialMs: 20, maxMs: 200 },
    healthyWatchMs: 50,
  });
  relay.start();
  return {
    api,
    rx,
    relay,
    logs,
    async synced(kinds = coreKindNames) {
      await eventually(`initial resyncs of ${kinds.join(", ")}`, () =>
        kinds.every((k) => rx.resyncs(k).length > 0),
      );
      // ...and every kind watching, so changes from here on arrive as events.
      const resources = ["namespaces", "nodes", "services", "endpointslices", "pods"];
      await eventually("watches open", () => resources.every((r) => api.openWatches(r) > 0));
    },
    async close() {
      await relay.stop(500);
      await api.close();
      await rx.close();
    },
  };
}

/** A v1 Service. */
export function svc(name: string, namespace = "default", port = 9080): KubeObj {
  return {
    metadata: { name, namespace },
    spec: { clusterIP: "10.96.0.10", ports: [{ name: "grpc", port, protocol: "TCP" }] },
  };
}

/** A discovery.k8s.io/v1 EndpointSlice of `service`. */
export function slice(name: string, service: string, ips: string[], namespace = "default"): KubeObj {
  return {
    metadata: { name, namespace, labels: { "kubernetes.io/service-name": service } },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "grpc", port: 9080, protocol: "TCP" }],
  };
}

/** A v1 Pod. */
export function pod(name: string, ip: string, namespace = "default"): KubeObj {
  return {
    metadata: { name, namespace, labels: { app: name } },
    spec: { nodeName: "node-1", containers: [{ name: "app", image: "app:1" }] },
    status: { phase: "Running", podIP: ip },
  };
}

/** A cluster-scoped object (Node, Namespace). */
export function named(name: string): KubeObj {
  return { metadata: { name } };
}

/** Names of a list of posted events or items: "ADDED default/a". */
export function names(
  events: { type?: string; object?: { metadata: { name: string; namespace?: string } } }[],
): string[] {
  return events.map((e) => `${e.type} ${e.object?.metadata.namespace ?? ""}/${e.object?.metadata.name}`);
}

/**
 * A relay from `api` to a real control plane at `port` (cluster `relay-e2e`, no periodic resync,
 * no Istio kinds, fast batches and backoff), logging into `logs`; `extra` overrides the relay's own
 * options, `extra.config` its settings.
 */
export function relayToControlPlane(
  api: FakeApiServer,
  cp: { port: number; token: string },
  logs: string[],
  extra: Partial<Pick<RelayOptions, "heartbeatMs">> & { config?: Partial<RelayConfig> } = {},
): Relay {
  const { config, ...options } = extra;
  return createRelay({
    kc: allowPlainHttp(api.kubeConfig()),
    config: {
      url: `http://127.0.0.1:${cp.port}`,
      token: cp.token,
      clusterId: "relay-e2e",
      healthPort: undefined,
      healthHost: "127.0.0.1",
      istioNamespace: "istio-system",
      resyncPeriodMs: 0,
      batchSize: 500,
      batchDelayMs: 10,
      maxQueuedEvents: 10_000,
      listPageSize: 500,
      watchEndpoints: false,
      watchIstio: false,
      discoveryIntervalMs: 0,
      shutdownTimeoutMs: 1000,
      statusIntervalMs: 0,
      logEvents: false,
      ...config,
    },
    log: (line) => logs.push(line),
    backoff: { initialMs: 20, maxMs: 200 },
    healthyWatchMs: 50,
    ...options,
  });
}
