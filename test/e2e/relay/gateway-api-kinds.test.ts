/**
 * The relay and the Gateway API over real HTTP: with its CRDs served beside Istio's, a GatewayClass,
 * a Gateway API Gateway and an Istio Gateway of the same name, an HTTPRoute, a GRPCRoute and a
 * ReferenceGrant reach ingest as lists and watch events at the version discovery chose, each resync
 * naming its kind's id; run through ingest's own validation they are two Gateways of two ids. A
 * cluster without the Gateway API says so once and watches none of it; its removal resyncs only
 * its kinds as empty.
 */
import { afterEach, describe, expect, it } from "vitest";
import { validateEvents, validateList } from "../../../lib/ingest/index.ts";
import { crdKinds } from "../../../lib/relay/kinds.ts";
import { gatewayApiResources } from "./fake-crds.ts";
import { coreKindNames, type Harness, named, startHarness, svc } from "./harness.ts";
import { eventually, type Receiver } from "./receiver.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const gw = "gateway.networking.k8s.io";
const istioKinds = crdKinds.filter((d) => d.group.endsWith(".istio.io")).map((d) => d.kind);
const gatewayKinds = crdKinds.filter((d) => d.group === gw).map((d) => d.kind);
const ns = (name: string, spec: unknown = {}) => ({ metadata: { name, namespace: "default" }, spec });

/** One object of each Gateway API kind and an Istio Gateway, the two Gateways both named `name`. */
function applyGateways(api: Harness["api"], name: string): void {
  api.apply("gatewayclasses", {
    metadata: { name: `class-${name}` },
    spec: { controllerName: "istio.io/gateway-controller" },
  });
  api.apply(
    `gateways.${gw}`,
    ns(name, { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
  );
  api.apply(
    "gateways",
    ns(name, {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    }),
  );
  api.apply("httproutes", ns(`http-${name}`));
  api.apply("grpcroutes", ns(`grpc-${name}`));
  api.apply(
    "referencegrants",
    ns(`grant-${name}`, {
      from: [{ group: gw, kind: "HTTPRoute", namespace: "other" }],
      to: [{ group: "", kind: "Service" }],
    }),
  );
}

const seed = (api: Harness["api"]) => {
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.apply("services", svc("reviews"));
};

/** Each resync of `kind`: its list's apiVersion and kind, and its item names. */
const resyncsOf = (rx: Receiver, kind: string) =>
  rx
    .resyncs(kind)
    .map(
      (r) => `${r.list.apiVersion} ${r.list.kind} [${r.list.items.map((i) => i.metadata.name).join(",")}]`,
    );

describe("the Gateway API kinds through the relay", () => {
  it("are discovered beside Istio's, listed and watched at their newest served version, and land as their own ids", async () => {
    // Rediscovered every 100ms, so the removal at the end is noticed.
    h = await startHarness({ discoveryIntervalMs: 100 }, (api) => {
      seed(api);
      api.serveCrds(["v1"]);
      api.serveCrds(["v1", "v1beta1"], gatewayApiResources());
      applyGateways(api, "edge");
    });
    const { api, rx } = h;
    await h.synced([...coreKindNames, ...istioKinds, ...gatewayKinds]);
    expect(Object.fromEntries(["Gateway", ...gatewayKinds].map((k) => [k, resyncsOf(rx, k)]))).toEqual({
      Gateway: ["networking.istio.io/v1 GatewayList [edge]"],
      GatewayClass: [`${gw}/v1 GatewayClassList [class-edge]`],
      KubernetesGateway: [`${gw}/v1 GatewayList [edge]`],
      HTTPRoute: [`${gw}/v1 HTTPRouteList [http-edge]`],
      GRPCRoute: [`${gw}/v1 GRPCRouteList [grpc-edge]`],
      // Istio 1.30 reads ReferenceGrant at v1beta1, though the CRD serves v1 too.
      ReferenceGrant: [`${gw}/v1beta1 ReferenceGrantList [grant-edge]`],
    });
    for (const k of gatewayKinds)
      expect(h.logs.filter((l) => l.startsWith(`relay: ${k}: served at ${gw}/`))).toHaveLength(1);
    expect(h.logs.join("\n")).not.toMatch(/no (Istio|Gateway API) CRD is served/);
    // Every resync names every kind watched, the Gateway API's by id.
    const watching = new Set(rx.requests.filter((r) => r.path === "/v1/resync").map((r) => r.watching));
    expect(watching).toEqual(new Set([[...coreKindNames, ...istioKinds, ...gatewayKinds].join(",")]));

    // Ingest's own validation of what was posted: two Gateways, two ids.
    for (const kind of ["Gateway", "KubernetesGateway", "GatewayClass"]) {
      const posted = rx.resyncs(kind)[0]?.list;
      const list = await validateList(kind, posted);
      expect(list.ok && list.value.items.map((i) => `${i.kind} ${i.metadata.name}`)).toEqual([
        `${kind} ${kind === "GatewayClass" ? "class-edge" : "edge"}`,
      ]);
    }

    // Watch events of the two Gateways of one name arrive with their groups; ingest tells them apart.
    await eventually("the Gateway API watches open", () =>
      ["gatewayclasses", `gateways.${gw}`, "httproutes", "grpcroutes", "referencegrants"].every(
        (r) => api.openWatches(r) > 0,
      ),
    );
    await eventually("the Istio Gateway watch open", () => api.openWatches("gateways") > 0);
    applyGateways(api, "second");
    const events = await eventually("an event of each kind named second", () => {
      const got = rx.events().filter((e) => e.object.metadata.name.endsWith("second"));
      return got.length === 6 && got;
    });
    const validated = validateEvents(events);
    expect(
      validated.ok && validated.value.map((e) => (e.type === "ADDED" ? e.object.kind : e.type)).sort(),
    ).toEqual(
      ["Gateway", "GRPCRoute", "GatewayClass", "HTTPRoute", "KubernetesGateway", "ReferenceGrant"].sort(),
    );
    expect(
      events
        .filter((e) => e.object.kind === "Gateway")
        .map((e) => e.object.apiVersion)
        .sort(),
    ).toEqual([`${gw}/v1`, "networking.istio.io/v1"]);

    // The Gateway API uninstalled: its kinds resync as empty, by id; Istio's Gateway stays watched.
    api.removeCrds(gatewayApiResources());
    await eventually("an empty resync of every Gateway API kind", () =>
      gatewayKinds.every((k) => rx.resyncs(k).at(-1)?.list.items.length === 0),
    );
    expect(resyncsOf(rx, "KubernetesGateway").at(-1)).toBe(`${gw}/v1 GatewayList []`);
    expect(resyncsOf(rx, "Gateway")).toEqual(["networking.istio.io/v1 GatewayList [edge]"]);
    expect(h.relay.kinds()).toContain("Gateway");
    expect(h.relay.kinds()).not.toContain("KubernetesGateway");
  });

  it("a cluster without the Gateway API CRDs: Istio's kinds watched, the Gateway API's not, said once", async () => {
    h = await startHarness({ discoveryIntervalMs: 100 }, (api) => {
      seed(api);
      api.serveCrds(["v1"]);
    });
    await h.synced([...coreKindNames, ...istioKinds]);
    const said = "relay: no Gateway API CRD is served: watching none until one is installed";
    expect(h.logs.filter((l) => l === said)).toHaveLength(1);
    expect(h.relay.kinds().filter((k) => gatewayKinds.includes(k))).toEqual([]);
    // Installed later at v1 only: found by the next discovery and listed; the line is not said
    // again. ReferenceGrant served at v1 alone is not read, as by Istio 1.30 (v1beta1, v1alpha2).
    h.api.serveCrds(["v1"], gatewayApiResources());
    const served = gatewayKinds.filter((k) => k !== "ReferenceGrant");
    await h.synced([...coreKindNames, ...istioKinds, ...served]);
    expect(resyncsOf(h.rx, "KubernetesGateway")).toEqual([`${gw}/v1 GatewayList []`]);
    expect(resyncsOf(h.rx, "ReferenceGrant")).toEqual([]);
    expect(h.relay.kinds()).not.toContain("ReferenceGrant");
    expect(h.logs.filter((l) => l === said)).toHaveLength(1);
  });
});
