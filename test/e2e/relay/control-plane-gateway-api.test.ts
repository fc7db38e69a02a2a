/**
 * The relay feeding the real control plane (a child process) from a fake API server that serves
 * Istio's CRDs and the Gateway API's: the Istio Gateway and the Gateway API Gateway of one name are
 * two kinds at the control plane too. Its start-up sync waits for `KubernetesGateway` on its own
 * (Istio's `Gateway` already resynced), every resync and event is accepted, and the events count
 * under istiod's informer names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Relay } from "../../../functions/node/relay/relay.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { gatewayApiResources } from "./fake-crds.ts";
import { named, relayToControlPlane } from "./harness.ts";

let cp: RunningControlPlane;
let api: FakeApiServer;
let relay: Relay;
const logs: string[] = [];
const gw = "gateway.networking.k8s.io";
const ns = (name: string, spec: unknown) => ({ metadata: { name, namespace: "default" }, spec });

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  api = await startFakeApiServer();
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.serveCrds(["v1"]);
  api.serveCrds(["v1", "v1beta1"], gatewayApiResources());
  api.apply(
    "gateways",
    ns("edge", {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    }),
  );
  api.apply(
    `gateways.${gw}`,
    ns("edge", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
  );
  api.apply("gatewayclasses", {
    metadata: { name: "istio" },
    spec: { controllerName: "istio.io/gateway-controller" },
  });
  // The Gateway API's Gateways cannot be listed until the first test lets them.
  api.failNext(`/apis/${gw}/v1/gateways`, 503, Number.MAX_SAFE_INTEGER);
  relay = relayToControlPlane(api, cp, logs, { config: { watchIstio: true } });
  relay.start();
});

afterAll(async () => {
  await relay?.stop(500);
  await api?.close();
  await cp?.stop();
});

/** The control plane's start-up sync of cluster relay-e2e, as GET /ready shows it. */
async function clusterSync(): Promise<{ synced?: boolean; waitingFor?: string[] } | undefined> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/ready`);
  const body = (await res.json()) as {
    clusters?: { cluster: string; synced: boolean; waitingFor?: string[] }[];
  };
  return body.clusters?.find((c) => c.cluster === "relay-e2e");
}

async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; /ready: ${JSON.stringify(await clusterSync())}\n${logs.join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

const metric = async (line: RegExp) =>
  (await (await fetch(`http://127.0.0.1:${cp.port}/metrics`)).text()).split("\n").find((l) => line.test(l));

describe("relay ▶ control plane: the two Gateways of one name", () => {
  it("start-up sync waits for KubernetesGateway alone while Istio's Gateway is resynced; then synced", async () => {
    await until(
      "every kind but KubernetesGateway resynced",
      async () => (await clusterSync())?.waitingFor?.join() === "KubernetesGateway",
    );
    api.clearFailures();
    await until("the cluster synced", async () => {
      const c = await clusterSync();
      return c?.synced === true && c.waitingFor?.length === 0;
    });
    expect(relay.kinds()).toEqual(
      expect.arrayContaining(["Gateway", "KubernetesGateway", "GatewayClass", "ReferenceGrant"]),
    );
    expect(relay.stats()).toMatchObject({ rejectedEvents: 0, rejectedResyncs: 0 });
  });

  it("watch events of both Gateways are accepted and counted under istiod's informer name Gateway", async () => {
    await until(
      "the Gateway watches open",
      async () => api.openWatches("gateways") > 0 && api.openWatches(`gateways.${gw}`) > 0,
    );
    api.apply(
      "gateways",
      ns("second", {
        selector: { istio: "ingressgateway" },
        servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
      }),
    );
    api.apply(
      `gateways.${gw}`,
      ns("second", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
    );
    const added = await until("two Gateway events counted", async () => {
      const l = await metric(/^pilot_k8s_cfg_events\{type="Gateway",event="add"\}/);
      return l?.endsWith(" 2") && l;
    });
    expect(added).toBe('pilot_k8s_cfg_events{type="Gateway",event="add"} 2');
    expect(relay.stats()).toMatchObject({ rejectedEvents: 0, rejectedResyncs: 0 });
  });
});
