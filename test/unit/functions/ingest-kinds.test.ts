/**
 * The ingest app's resync by kind and group (functions/ingest.ts): `kind=<id>` as written, or
 * `kind=Gateway&group=gateway.networking.k8s.io` for the Gateway API's Gateway; a List whose item
 * is of the other group is refused whole with a 400 naming its index, nothing of it applied.
 */
import { describe, expect, it } from "vitest";
import { createIngestApp } from "../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";

function setup() {
  const app = createIngestApp({
    store: createMemoryStore(),
    registry: defaultRegistryOptions,
    now: () => 1_700_000_000_000,
    token: "t",
    clusterId: "Kubernetes",
    allowUnauthenticated: () => false,
    log: () => undefined,
  });
  return async (query: string, body: unknown) => {
    const res = await app.request(`/v1/resync?cluster=east&${query}`, {
      method: "POST",
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

const gw = "gateway.networking.k8s.io";
/** Each group's smallest valid Gateway: a Gateway checked as the other kind would be rejected. */
const gatewaySpec = (apiVersion: string) =>
  apiVersion.startsWith(gw)
    ? { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }
    : { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] };
const gateways = (apiVersion: string, ...names: string[]) => ({
  apiVersion,
  kind: "GatewayList",
  metadata: { resourceVersion: "7" },
  items: names.map((name) => ({
    metadata: { name, namespace: "default", resourceVersion: "7" },
    spec: gatewaySpec(apiVersion),
  })),
});

describe("POST /v1/resync of the two Gateways", () => {
  it("kind=Gateway is Istio's; with group=gateway.networking.k8s.io, or kind=KubernetesGateway, the Gateway API's", async () => {
    const resync = setup();
    const istio = await resync("kind=Gateway", gateways("networking.istio.io/v1", "a"));
    expect(istio).toMatchObject({ status: 200, body: { ignored: {}, rejected: [] } });
    const byGroup = await resync(`kind=Gateway&group=${gw}`, gateways(`${gw}/v1`, "a", "b"));
    expect(byGroup).toMatchObject({ status: 200, body: { ignored: {}, rejected: [] } });
    const byId = await resync("kind=KubernetesGateway", gateways(`${gw}/v1`, "a"));
    expect(byId).toMatchObject({ status: 200, body: { ignored: {}, rejected: [] } });
  });

  it("an item of the other group is refused whole, 400 naming its index", async () => {
    const resync = setup();
    const list = gateways(`${gw}/v1`, "a", "b");
    (list.items[1] as Record<string, unknown>).apiVersion = "networking.istio.io/v1";
    (list.items[1] as Record<string, unknown>).kind = "Gateway";
    const r = await resync(`kind=Gateway&group=${gw}`, list);
    expect(r).toMatchObject({ status: 400, body: { index: 1, field: "items[1].apiVersion" } });
    const unknown = await resync("kind=Gateway&group=example.com", gateways("example.com/v1"));
    expect(unknown).toMatchObject({ status: 400, body: { field: "group" } });
  });
});
