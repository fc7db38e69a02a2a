import { describe, expect, it } from "vitest";
import {
  coreKinds,
  endpointsKind,
  istioKindsServed,
  kindPath,
  servesIstioGroup,
} from "../../../lib/relay/kinds.ts";
import { asListPage, describeStatus, mergePages, objectResourceVersion } from "../../../lib/relay/list.ts";

describe("kinds", () => {
  it("live at their real paths", () => {
    expect([...coreKinds, endpointsKind].map(kindPath)).toEqual([
      "/api/v1/namespaces",
      "/api/v1/nodes",
      "/api/v1/services",
      "/apis/discovery.k8s.io/v1/endpointslices",
      "/api/v1/pods",
      "/api/v1/endpoints",
    ]);
  });

  it("Istio kinds are found from discovery documents", () => {
    const groups = {
      groups: [
        { name: "apps", versions: [{ version: "v1" }] },
        { name: "networking.istio.io", versions: [{ version: "v1" }, { version: "v1beta1" }] },
      ],
    };
    expect(servesIstioGroup(groups)).toBe(true);
    expect(
      servesIstioGroup({ groups: [{ name: "networking.istio.io", versions: [{ version: "v1alpha3" }] }] }),
    ).toBe(false);
    expect(servesIstioGroup({})).toBe(false);
    const resources = {
      resources: [{ name: "virtualservices" }, { name: "virtualservices/status" }, { name: "gateways" }],
    };
    expect(istioKindsServed(resources).map((k) => k.kind)).toEqual(["VirtualService", "Gateway"]);
    expect(istioKindsServed(null)).toEqual([]);
  });
});

describe("lists", () => {
  it("pages merge into the list the API server would have returned unpaged", () => {
    const p1 = {
      apiVersion: "v1",
      kind: "PodList",
      metadata: { resourceVersion: "7", continue: "c", remainingItemCount: 1 },
      items: [{ a: 1 }],
    };
    const p2 = { apiVersion: "v1", kind: "PodList", metadata: { resourceVersion: "7" }, items: [{ b: 2 }] };
    expect(mergePages([p1, p2])).toEqual({
      apiVersion: "v1",
      kind: "PodList",
      metadata: { resourceVersion: "7" },
      items: [{ a: 1 }, { b: 2 }],
    });
  });

  it("a page that is no list is named", () => {
    expect(asListPage([])).toEqual({ ok: false, error: "list response is not a JSON object" });
    expect(asListPage({ items: "x" })).toEqual({ ok: false, error: "list response has no items array" });
    expect(asListPage({ items: [] })).toEqual({ ok: true, list: { items: [], metadata: {} } });
  });

  it("reads resourceVersions and Status objects", () => {
    expect(objectResourceVersion({ metadata: { resourceVersion: "5" } })).toBe("5");
    expect(objectResourceVersion({ metadata: { resourceVersion: "" } })).toBeUndefined();
    expect(objectResourceVersion(null)).toBeUndefined();
    expect(describeStatus({ code: 410, reason: "Expired", message: "too old" })).toBe("410 Expired too old");
    expect(describeStatus(undefined)).toBe("no status");
  });
});
