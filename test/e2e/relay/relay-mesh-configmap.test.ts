/**
 * The relay's mesh ConfigMap watch against the fake API server: it lists and watches ConfigMaps in
 * ISTIO_NAMESPACE only, with fieldSelector=metadata.name=istio, so the resync holds the mesh
 * ConfigMap alone and changes to other ConfigMaps (another name, or `istio` elsewhere) never reach
 * ingest. The request log shows no cluster-wide ConfigMap list or watch.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, names, startHarness } from "./harness.ts";
import { eventually } from "./receiver.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const cm = (name: string, namespace: string, mesh: string) => ({
  metadata: { name, namespace },
  data: { mesh },
});

describe("the mesh ConfigMap watch", () => {
  it("lists and watches only `istio` in ISTIO_NAMESPACE, by field selector", async () => {
    h = await startHarness({ istioNamespace: "mesh-admin" }, (api) => {
      api.apply("configmaps", cm("istio", "mesh-admin", "trustDomain: a.org"));
      api.apply("configmaps", cm("istio-sidecar-injector", "mesh-admin", "x: 1"));
      api.apply("configmaps", cm("istio", "default", "trustDomain: b.org"));
    });
    const { api, rx } = h;
    await h.synced(["ConfigMap"]);
    expect(rx.resyncs("ConfigMap")[0]?.list.items.map((i) => i.metadata.name)).toEqual(["istio"]);
    const cmRequests = api.requests.filter((r) => r.path.endsWith("/configmaps"));
    expect(cmRequests.length).toBeGreaterThan(0);
    for (const r of cmRequests) {
      expect(r.path).toBe("/api/v1/namespaces/mesh-admin/configmaps");
      expect(r.query.fieldSelector).toBe("metadata.name=istio");
    }
    await eventually("the ConfigMap watch open", () => api.openWatches("configmaps") > 0);

    // Other ConfigMaps change first; only the mesh ConfigMap's change arrives.
    api.apply("configmaps", cm("istio-sidecar-injector", "mesh-admin", "x: 2"));
    api.apply("configmaps", cm("istio", "default", "trustDomain: c.org"));
    api.apply("configmaps", cm("istio", "mesh-admin", "trustDomain: d.org"));
    await eventually("the mesh ConfigMap's change", () =>
      rx.events().some((e) => e.object?.metadata.namespace === "mesh-admin"),
    );
    const delivered = rx
      .events()
      .filter((e) => e.object?.kind === "ConfigMap" || e.object?.metadata.name?.startsWith("istio"));
    expect(names(delivered)).toEqual(["MODIFIED mesh-admin/istio"]);
  });
});
