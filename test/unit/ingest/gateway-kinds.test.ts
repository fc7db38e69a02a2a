/**
 * The two Gateways and the Gateway API kinds at ingest: an object is its kind by group (Istio's
 * Gateway ▶ Gateway, the Gateway API's ▶ KubernetesGateway), in events, admission and resyncs; a
 * known kind under a group that does not serve it is another API's kind, ignored per object; a
 * cluster-scoped GatewayClass is read without a namespace and stored under namespace "".
 */
import { describe, expect, it } from "vitest";
import { configzItem } from "../../../lib/debug/configz.ts";
import type { IngestContext } from "../../../lib/ingest/context.ts";
import { decodeAdmissionReview, validateEvents, validateList } from "../../../lib/ingest/index.ts";
import { toStored } from "../../../lib/ingest/kinds/istio-config.ts";
import { keys, listAll } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createHarness } from "./support/harness.ts";

const gwApi = "gateway.networking.k8s.io";
/** The smallest valid spec of each kind (lib/registry/istio/validate-gateway.ts, gateway-api/validate-*.ts). */
const validSpec = (apiVersion: string, kind: string): Record<string, unknown> => {
  if (kind === "Gateway" && apiVersion.startsWith("networking.istio.io/"))
    return { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] };
  if (kind === "Gateway")
    return { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] };
  if (kind === "ReferenceGrant")
    return {
      from: [{ group: gwApi, kind: "HTTPRoute", namespace: "other" }],
      to: [{ group: "", kind: "Service" }],
    };
  return {};
};
const obj = (apiVersion: string, kind: string, name = "edge", o: Record<string, unknown> = {}) => ({
  apiVersion,
  kind,
  metadata: { name, namespace: "default", resourceVersion: "5", generation: 3 },
  spec: validSpec(apiVersion, kind),
  ...o,
});
const istioGateway = (name = "edge") => obj("networking.istio.io/v1", "Gateway", name);
const apiGateway = (name = "edge") => obj(`${gwApi}/v1`, "Gateway", name);
const gatewayClass = (o: Record<string, unknown> = {}) => ({
  apiVersion: `${gwApi}/v1`,
  kind: "GatewayClass",
  metadata: { name: "istio", resourceVersion: "4" },
  spec: { controllerName: "istio.io/gateway-controller" },
  ...o,
});
const ev = (object: unknown, type = "ADDED") => ({ type, object });
const kinds = (events: unknown[]) => {
  const r = validateEvents(events.map((o) => ev(o)));
  return r.ok ? r.value.map((e) => (e.type === "BOOKMARK" ? "BOOKMARK" : e.object.kind)) : r.error;
};

describe("validated events carry their kind's id", () => {
  it("tells the two Gateways apart by group; the object is otherwise as sent", () => {
    expect(kinds([istioGateway(), apiGateway()])).toEqual(["Gateway", "KubernetesGateway"]);
    const r = validateEvents([ev(apiGateway())]);
    expect(r.ok && r.value[0]).toEqual({
      type: "ADDED",
      object: { ...apiGateway(), kind: "KubernetesGateway" },
    });
  });

  it("every Gateway API kind at every version Istio reads; a version it does not read is a malformed event", () => {
    expect(
      kinds([
        obj(`${gwApi}/v1beta1`, "HTTPRoute"),
        obj(`${gwApi}/v1alpha2`, "GRPCRoute"),
        obj(`${gwApi}/v1beta1`, "ReferenceGrant"),
        obj(`${gwApi}/v1alpha2`, "Gateway"),
      ]),
    ).toEqual(["HTTPRoute", "GRPCRoute", "ReferenceGrant", "KubernetesGateway"]);
    expect(kinds([obj(`${gwApi}/v1beta1`, "GRPCRoute")])).toMatchObject({
      index: 0,
      field: "object.apiVersion",
      message:
        /not served for GRPCRoute; want gateway.networking.k8s.io\/v1 or gateway.networking.k8s.io\/v1alpha2/,
    });
  });

  it("a known kind under a group that does not serve it is another API's: its own id, never the table's", () => {
    expect(
      kinds([
        obj("example.com/v1", "Gateway"),
        obj("networking.istio.io/v1", "HTTPRoute"),
        obj(`${gwApi}/v1`, "KubernetesGateway"),
      ]),
    ).toEqual([
      "example.com/v1 Gateway",
      "networking.istio.io/v1 HTTPRoute",
      `${gwApi}/v1 KubernetesGateway`,
    ]);
  });

  it("a Gateway without an apiVersion names no kind: two groups serve one", () => {
    const { apiVersion: _, ...bare } = apiGateway();
    expect(kinds([bare])).toMatchObject({
      field: "object.apiVersion",
      message: /is required: Gateway is a kind of networking.istio.io and of gateway.networking.k8s.io/,
    });
    const { apiVersion: __, ...route } = obj(`${gwApi}/v1`, "HTTPRoute");
    expect(kinds([route])).toEqual(["HTTPRoute"]);
  });

  it("GatewayClass is cluster-scoped: no namespace, and one is refused", () => {
    expect(kinds([gatewayClass()])).toEqual(["GatewayClass"]);
    const namespaced = gatewayClass({ metadata: { name: "istio", namespace: "default" } });
    expect(kinds([namespaced])).toMatchObject({
      field: "object.metadata.namespace",
      message: /GatewayClass is cluster-scoped/,
    });
  });

  it("an AdmissionReview of the Gateway API's Gateway is decoded as KubernetesGateway", () => {
    const review = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "u1", operation: "CREATE", namespace: "default", object: apiGateway() },
    };
    const r = decodeAdmissionReview(review);
    expect(r.ok && r.value.event?.type === "ADDED" && r.value.event.object.kind).toBe("KubernetesGateway");
  });
});

describe("resync names a kind by id, or by object kind and group", () => {
  const list = (items: unknown[], kind = "GatewayList") => ({
    apiVersion: `${gwApi}/v1`,
    kind,
    metadata: {},
    items,
  });
  const item = (name: string, apiVersion = `${gwApi}/v1`) => ({
    metadata: { name, namespace: "default" },
    spec: validSpec(apiVersion, "Gateway"),
  });

  it("kind=KubernetesGateway, and kind=Gateway&group=gateway.networking.k8s.io, take a GatewayList", async () => {
    for (const [kind, group] of [
      ["KubernetesGateway", undefined],
      ["Gateway", gwApi],
      ["KubernetesGateway", gwApi],
    ]) {
      const r = await validateList(kind as string, list([item("a")]), undefined, undefined, group);
      expect(r.ok && [r.value.kind, r.value.items.map((i) => `${i.apiVersion} ${i.kind}`)]).toEqual([
        "KubernetesGateway",
        [`${gwApi}/v1 KubernetesGateway`],
      ]);
    }
    const istio = await validateList("Gateway", list([item("a", "networking.istio.io/v1")], "GatewayList"));
    expect(istio.ok && istio.value.items.map((i) => `${i.apiVersion} ${i.kind}`)).toEqual([
      "networking.istio.io/v1 Gateway",
    ]);
  });

  it("a List whose item's group disagrees with the kind named is refused whole, naming the index", async () => {
    const wrong = { ...item("b"), apiVersion: `${gwApi}/v1`, kind: "Gateway" };
    const r = await validateList("Gateway", list([item("a"), wrong]));
    expect(r.ok ? "ok" : r.error).toMatchObject({
      index: 1,
      field: "items[1].apiVersion",
      message: /"gateway.networking.k8s.io\/v1" is not networking.istio.io/,
    });
    const back = { ...item("c"), apiVersion: "networking.istio.io/v1", kind: "Gateway" };
    const r2 = await validateList("Gateway", list([back]), undefined, undefined, gwApi);
    expect(r2.ok ? "ok" : r2.error).toMatchObject({ index: 0, field: "items[0].apiVersion" });
  });

  it("a group without that kind, and a list of the id's name, are refused", async () => {
    const r = await validateList("VirtualService", list([]), undefined, undefined, gwApi);
    expect(r.ok ? "ok" : r.error).toMatchObject({
      field: "group",
      message: /has no kind "VirtualService"; want one of GatewayClass, Gateway/,
    });
    const named = await validateList("KubernetesGateway", list([], "KubernetesGatewayList"));
    expect(named.ok ? "ok" : named.error).toMatchObject({ field: "kind", message: /is not a GatewayList/ });
  });
});

describe("applying the Gateway API kinds", () => {
  it("two Gateways of one name are two kinds: stored apart, neither taken for the other", async () => {
    const h = createHarness();
    const s = await h.ingest(
      ...[istioGateway(), apiGateway(), gatewayClass(), obj(`${gwApi}/v1`, "HTTPRoute")].map((o) => ev(o)),
    );
    expect(s).toMatchObject({ applied: 4, ignored: {} });
    const stored = async (kind: string) =>
      (await listAll<{ kind: string; name: string }>(h.store, keys.configPrefix(kind))).map(
        (e) => `${e.value.kind} ${e.value.name}`,
      );
    expect(await stored("Gateway")).toEqual(["Gateway edge"]);
    expect(await stored("KubernetesGateway")).toEqual(["KubernetesGateway edge"]);
    // A resync of the Gateway API's Gateways leaves Istio's alone.
    await h.resync("KubernetesGateway", [apiGateway("a")], "9");
    expect(await stored("KubernetesGateway")).toEqual(["KubernetesGateway a"]);
    expect(await stored("Gateway")).toEqual(["Gateway edge"]);
    const other = await h.ingest(ev(obj("example.com/v1", "Gateway")));
    expect(other.ignored).toEqual({ "example.com/v1 Gateway": 1 });
  });

  it('a cluster-scoped config is stored under namespace "", with its generation for status', async () => {
    const store = createMemoryStore();
    const ctx = { cluster: "east" } as IngestContext;
    const validated = validateEvents([
      ev({ ...gatewayClass(), metadata: { name: "istio", resourceVersion: "4", generation: 2 } }),
    ]);
    if (!validated.ok || validated.value[0]?.type !== "ADDED") throw new Error("not valid");
    const c = toStored("GatewayClass", ctx, validated.value[0].object);
    expect(c).toMatchObject({ kind: "GatewayClass", namespace: "", name: "istio", generation: 2 });
    await store.put(keys.config("GatewayClass", "", "istio", "east"), c);
    const held = await listAll(store, keys.configsIn("GatewayClass", ""));
    expect(held.map((e) => e.value)).toEqual([c]);
    // configz shows it as the API server does: its object kind and group.
    expect(
      configzItem(toStored("KubernetesGateway", ctx, { ...apiGateway(), kind: "KubernetesGateway" })),
    ).toMatchObject({
      apiVersion: `${gwApi}/v1`,
      kind: "Gateway",
    });
  });

  it("records generation only for kinds whose status is written: other configs keep their stored shape", () => {
    const ctx = { cluster: "east" } as IngestContext;
    expect(toStored("HTTPRoute", ctx, { ...obj(`${gwApi}/v1`, "HTTPRoute") }).generation).toBe(3);
    expect(
      toStored("ReferenceGrant", ctx, { ...obj(`${gwApi}/v1beta1`, "ReferenceGrant") }),
    ).not.toHaveProperty("generation");
    expect(
      toStored("VirtualService", ctx, { ...obj("networking.istio.io/v1", "VirtualService") }),
    ).not.toHaveProperty("generation");
  });
});
