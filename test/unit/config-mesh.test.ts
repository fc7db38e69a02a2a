/** ISTIO_NAMESPACE and the mesh files in parseConfig: defaults, values, and a bad namespace naming its variable. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/config.ts";

describe("parseConfig: mesh settings", () => {
  it("ISTIO_NAMESPACE defaults to istio-system; no mesh files unless set", () => {
    const r = parseConfig({});
    expect(r.ok && r.config.registry.istioNamespace).toBe("istio-system");
    expect(r.ok && r.config.registry.meshFiles).toBeUndefined();
  });

  it("reads ISTIO_NAMESPACE, MESH_CONFIG_FILE and MESH_NETWORKS_FILE", () => {
    const r = parseConfig({
      ISTIO_NAMESPACE: "mesh-admin",
      MESH_CONFIG_FILE: "/etc/istio/config/mesh",
      MESH_NETWORKS_FILE: "/etc/istio/config/meshNetworks",
    });
    expect(r.ok && r.config.registry).toMatchObject({
      istioNamespace: "mesh-admin",
      meshFiles: { mesh: "/etc/istio/config/mesh", meshNetworks: "/etc/istio/config/meshNetworks" },
    });
    const one = parseConfig({ MESH_NETWORKS_FILE: "/n" });
    expect(one.ok && one.config.registry.meshFiles).toEqual({ meshNetworks: "/n" });
  });

  it("a bad ISTIO_NAMESPACE stops start-up naming the variable", () => {
    const r = parseConfig({ ISTIO_NAMESPACE: "Istio_System" });
    expect(r.ok).toBe(false);
    expect(
      !r.ok && r.errors.some((e) => e.startsWith("ISTIO_NAMESPACE=Istio_System: not a namespace name")),
    ).toBe(true);
  });
});
