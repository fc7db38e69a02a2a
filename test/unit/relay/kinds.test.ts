import { describe, expect, it } from "vitest";
import { kindTable } from "../../../lib/kinds/descriptors.ts";
import {
  apiVersionOf,
  crdKinds,
  fixedKinds,
  kindPath,
  kindQuery,
  watchingValue,
  watchSpec,
} from "../../../lib/relay/kinds.ts";
import { asListPage, describeStatus, mergePages, objectResourceVersion } from "../../../lib/relay/list.ts";

describe("kinds", () => {
  it("the fixed kinds come from the table, in its order, at their real paths", () => {
    expect(fixedKinds(true).map(kindPath)).toEqual([
      "/api/v1/namespaces",
      "/api/v1/nodes",
      "/api/v1/services",
      "/apis/discovery.k8s.io/v1/endpointslices",
      "/api/v1/pods",
      "/api/v1/endpoints",
      "/api/v1/namespaces/istio-system/configmaps",
    ]);
    expect(fixedKinds(false).map((k) => k.kind)).toEqual([
      "Namespace",
      "Node",
      "Service",
      "EndpointSlice",
      "Pod",
      "ConfigMap",
    ]);
    expect(fixedKinds(false)[3]).toEqual({
      kind: "EndpointSlice",
      listKind: "EndpointSliceList",
      group: "discovery.k8s.io",
      version: "v1",
      resource: "endpointslices",
      relay: "always",
    });
  });

  it("the mesh ConfigMap is watched in ISTIO_NAMESPACE only, by name", () => {
    const cm = fixedKinds(false, "mesh-admin").find((k) => k.kind === "ConfigMap");
    expect(cm).toMatchObject({ namespace: "mesh-admin", fieldSelector: "metadata.name=istio" });
    expect(kindPath(cm as NonNullable<typeof cm>)).toBe("/api/v1/namespaces/mesh-admin/configmaps");
    expect(kindQuery(cm as NonNullable<typeof cm>)).toEqual({ fieldSelector: "metadata.name=istio" });
    const pods = fixedKinds(false).find((k) => k.kind === "Pod");
    expect(kindQuery(pods as NonNullable<typeof pods>)).toEqual({});
  });

  it("the Istio kinds, WorkloadEntry included, wait for discovery; a spec is at the version chosen", () => {
    expect(crdKinds.map((d) => d.kind)).toEqual([
      "ServiceEntry",
      "WorkloadEntry",
      "VirtualService",
      "DestinationRule",
      "Sidecar",
      "Gateway",
      "PeerAuthentication",
      "AuthorizationPolicy",
    ]);
    const ap = watchSpec(crdKinds[7] as (typeof crdKinds)[number], "v1beta1");
    expect(kindPath(ap)).toBe("/apis/security.istio.io/v1beta1/authorizationpolicies");
    const we = watchSpec(crdKinds[1] as (typeof crdKinds)[number], "v1beta1");
    expect(kindPath(we)).toBe("/apis/networking.istio.io/v1beta1/workloadentries");
    expect(apiVersionOf(we)).toBe("networking.istio.io/v1beta1");
    expect(apiVersionOf(fixedKinds(false)[0] as ReturnType<typeof fixedKinds>[number])).toBe("v1");
    // Every kind of the table is watched one way or another: Secrets by name, while referenced
    // (functions/node/relay/secret-watchers.ts), never as a kind.
    expect(new Set([...fixedKinds(true), ...crdKinds].map((k) => k.kind))).toEqual(
      new Set(kindTable.filter((d) => d.relay !== "referenced").map((d) => d.kind)),
    );
    expect(kindTable.filter((d) => d.relay === "referenced").map((d) => d.kind)).toEqual(["Secret"]);
  });

  it("the watching parameter names each kind once, in table order, whatever order it is given in", () => {
    expect(watchingValue(["WorkloadEntry", "Pod", "Namespace", "Pod", "ServiceEntry"])).toBe(
      "Namespace,Pod,ServiceEntry,WorkloadEntry",
    );
    expect(watchingValue(["Zeta", "Service", "Alpha"])).toBe("Service,Alpha,Zeta");
    expect(watchingValue([])).toBe("");
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
