/** parseConfig: ISTIO_NAMESPACE, the system namespace whose network label is its cluster's network. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/config.ts";

describe("parseConfig: ISTIO_NAMESPACE", () => {
  it("unset or empty leaves it to the default (istio-system)", () => {
    for (const env of [{}, { ISTIO_NAMESPACE: "" }]) {
      const parsed = parseConfig(env);
      expect(parsed.ok && parsed.config.registry.systemNamespace).toBeUndefined();
    }
  });

  it("a namespace name is taken", () => {
    const parsed = parseConfig({ ISTIO_NAMESPACE: "istio-east" });
    expect(parsed.ok && parsed.config.registry.systemNamespace).toBe("istio-east");
  });

  it("anything else stops start-up naming the variable", () => {
    const parsed = parseConfig({ ISTIO_NAMESPACE: "Istio_System" });
    expect(parsed.ok ? [] : parsed.errors).toEqual([
      "ISTIO_NAMESPACE=Istio_System: not a namespace name (a DNS-1123 label)",
    ]);
  });
});
