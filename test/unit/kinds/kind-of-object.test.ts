/**
 * The kind table's identity: an object is its kind by group and object kind, so Istio's Gateway
 * and the Gateway API's are two ids; the versions are those istiod 1.30 reads (its gvk table:
 * pkg/config/schema/gvk/resources.gen.go, collections' VersionAliases), newest first.
 */
import { describe, expect, it } from "vitest";
import {
  groupOf,
  kindInGroup,
  kindOf,
  kindOfObject,
  kindsOfObject,
  kindTable,
} from "../../../lib/kinds/descriptors.ts";

describe("kindOfObject: (group, kind) ▶ id", () => {
  it.each([
    ["networking.istio.io/v1", "Gateway", "Gateway"],
    ["networking.istio.io/v1alpha3", "Gateway", "Gateway"],
    ["gateway.networking.k8s.io/v1", "Gateway", "KubernetesGateway"],
    ["gateway.networking.k8s.io/v1beta1", "Gateway", "KubernetesGateway"],
    ["gateway.networking.k8s.io/v1", "GatewayClass", "GatewayClass"],
    ["gateway.networking.k8s.io/v1", "HTTPRoute", "HTTPRoute"],
    ["gateway.networking.k8s.io/v1alpha2", "GRPCRoute", "GRPCRoute"],
    ["gateway.networking.k8s.io/v1beta1", "ReferenceGrant", "ReferenceGrant"],
    ["v1", "Service", "Service"],
    ["discovery.k8s.io/v1", "EndpointSlice", "EndpointSlice"],
    ["security.istio.io/v1", "AuthorizationPolicy", "AuthorizationPolicy"],
  ])("%s %s ▶ %s", (apiVersion, kind, id) => expect(kindOfObject(apiVersion, kind)?.kind).toBe(id));

  it.each([
    ["example.com/v1", "Gateway"],
    ["networking.istio.io/v1", "HTTPRoute"],
    ["gateway.networking.k8s.io/v1", "VirtualService"],
    ["v1", "Gateway"],
    ["gateway.networking.k8s.io/v1", "KubernetesGateway"],
    ["v1", "Widget"],
    ["v1", "constructor"],
  ])("%s %s ▶ none: no kind of that name in that group", (apiVersion, kind) =>
    expect(kindOfObject(apiVersion, kind)).toBeUndefined());

  it("reads the group of an apiVersion, the core group as empty", () => {
    expect(["v1", "apps/v1", "gateway.networking.k8s.io/v1beta1"].map(groupOf)).toEqual([
      "",
      "apps",
      "gateway.networking.k8s.io",
    ]);
    expect(kindInGroup("gateway.networking.k8s.io", "Gateway")?.kind).toBe("KubernetesGateway");
  });

  it("lists the kinds of one object kind in table order: the two Gateways, Istio's first", () => {
    expect(kindsOfObject("Gateway").map((d) => `${d.group} ${d.kind}`)).toEqual([
      "networking.istio.io Gateway",
      "gateway.networking.k8s.io KubernetesGateway",
    ]);
    expect(kindsOfObject("toString")).toEqual([]);
  });
});

describe("the Gateway API kinds", () => {
  const row = (id: string) => {
    const d = kindOf(id);
    return (
      d && [d.objectKind, d.resource, d.versions.join(","), d.namespaced, d.push, d.writesStatus ?? false]
    );
  };

  it("have istiod's versions, resources, scope, push scope and status", () => {
    expect(row("GatewayClass")).toEqual([
      "GatewayClass",
      "gatewayclasses",
      "v1,v1beta1,v1alpha2",
      false,
      "gateways",
      true,
    ]);
    expect(row("KubernetesGateway")).toEqual([
      "Gateway",
      "gateways",
      "v1,v1beta1,v1alpha2",
      true,
      "gateways",
      true,
    ]);
    expect(row("HTTPRoute")).toEqual([
      "HTTPRoute",
      "httproutes",
      "v1,v1beta1,v1alpha2",
      true,
      "services",
      true,
    ]);
    expect(row("GRPCRoute")).toEqual(["GRPCRoute", "grpcroutes", "v1,v1alpha2", true, "services", true]);
    expect(row("ReferenceGrant")).toEqual([
      "ReferenceGrant",
      "referencegrants",
      "v1beta1,v1alpha2",
      true,
      "gateways",
      false,
    ]);
    expect(row("Gateway")).toEqual(["Gateway", "gateways", "v1,v1beta1,v1alpha3", true, "gateways", false]);
  });

  it("are watched once their CRDs are served, observed by the webhook, counted under istiod's informer names", () => {
    const gw = kindTable.filter((d) => d.group === "gateway.networking.k8s.io");
    expect(gw.map((d) => [d.kind, d.relay, d.webhook, d.source, d.metricsLabel])).toEqual([
      ["GatewayClass", "crd", "observe", "config", "GatewayClass"],
      ["KubernetesGateway", "crd", "observe", "config", "Gateway"],
      ["HTTPRoute", "crd", "observe", "config", "HTTPRoute"],
      ["GRPCRoute", "crd", "observe", "config", "GRPCRoute"],
      ["ReferenceGrant", "crd", "observe", "config", "ReferenceGrant"],
    ]);
    expect(kindOf("KubernetesGateway")?.apiVersions[0]).toBe("gateway.networking.k8s.io/v1");
  });

  it("every id is unique, and a (group, object kind) pair names one kind", () => {
    expect(new Set(kindTable.map((d) => d.kind)).size).toBe(kindTable.length);
    expect(new Set(kindTable.map((d) => `${d.group}/${d.objectKind}`)).size).toBe(kindTable.length);
    for (const d of kindTable) expect(kindInGroup(d.group, d.objectKind)).toBe(d);
  });
});
