/** Builders for ServiceEntry and WorkloadEntry objects and configs, with overrides. */
import type { ServiceEntryConfig, ServiceEntrySpec } from "../../../../lib/registry/istio/service-entry.ts";
import type {
  WorkloadEntryConfig,
  WorkloadEntrySpec,
} from "../../../../lib/registry/istio/workload-entry.ts";

/** A valid STATIC ServiceEntry spec: one host, one HTTP port, one endpoint. */
export function seSpec(overrides: Partial<ServiceEntrySpec> = {}): ServiceEntrySpec {
  return {
    hosts: ["api.example.com"],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    resolution: "STATIC",
    endpoints: [{ address: "10.0.0.1" }],
    ...overrides,
  };
}

/** A ServiceEntry object as a watch event carries it (for the validation checks). */
export function seObject(spec: unknown, namespace = "shop"): Record<string, unknown> {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "api", namespace },
    spec,
  };
}

/** A WorkloadEntry object as a watch event carries it. */
export function weObject(spec: unknown): Record<string, unknown> {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name: "vm-1", namespace: "shop" },
    spec,
  };
}

/** A stored ServiceEntry config in namespace shop, cluster c1. */
export function seConfig(
  spec: Partial<ServiceEntrySpec> = {},
  meta: Partial<Omit<ServiceEntryConfig, "spec">> = {},
): ServiceEntryConfig {
  return {
    kind: "ServiceEntry",
    name: "api",
    namespace: "shop",
    clusterId: "c1",
    resourceVersion: "1",
    labels: {},
    ...meta,
    spec: seSpec(spec),
  };
}

/** A stored WorkloadEntry config in namespace shop, cluster c1, labelled app=api. */
export function weConfig(
  spec: Partial<WorkloadEntrySpec> = {},
  meta: Partial<Omit<WorkloadEntryConfig, "spec">> = {},
): WorkloadEntryConfig {
  return {
    kind: "WorkloadEntry",
    name: "vm-1",
    namespace: "shop",
    clusterId: "c1",
    resourceVersion: "1",
    labels: {},
    ...meta,
    spec: { address: "10.1.0.1", labels: { app: "api" }, ...spec },
  };
}
