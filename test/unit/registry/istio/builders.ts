/** Builders for Istio networking objects as the API server hands them over, with overrides. */
import type { ServiceEntryConfig, ServiceEntrySpec } from "../../../../lib/registry/istio/service-entry.ts";
import type {
  WorkloadEntryConfig,
  WorkloadEntrySpec,
} from "../../../../lib/registry/istio/workload-entry.ts";

export interface IstioObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; creationTimestamp?: string };
  spec: Record<string, unknown>;
}

function object(
  kind: string,
  spec: Record<string, unknown>,
  metadata: Partial<IstioObject["metadata"]>,
): IstioObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind,
    metadata: {
      name: "reviews",
      namespace: "default",
      creationTimestamp: "2026-01-01T00:00:00Z",
      ...metadata,
    },
    spec,
  };
}

/** A valid VirtualService: reviews ▶ subset v1, with `spec` fields replaced by the overrides. */
export function virtualService(
  spec: Record<string, unknown> = {},
  metadata: Partial<IstioObject["metadata"]> = {},
): IstioObject {
  return object(
    "VirtualService",
    { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews", subset: "v1" } }] }], ...spec },
    metadata,
  );
}

/** A valid HTTP route (one destination), with fields replaced by the overrides. */
export function httpRoute(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { route: [{ destination: { host: "reviews", subset: "v1" } }], ...overrides };
}

/** A valid DestinationRule for reviews with subsets v1 and v2, with `spec` fields replaced. */
export function destinationRule(
  spec: Record<string, unknown> = {},
  metadata: Partial<IstioObject["metadata"]> = {},
): IstioObject {
  return object(
    "DestinationRule",
    {
      host: "reviews",
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
      ],
      ...spec,
    },
    metadata,
  );
}

/** A valid Sidecar importing its own namespace and istio-system, with `spec` fields replaced. */
export function sidecar(
  spec: Record<string, unknown> = {},
  metadata: Partial<IstioObject["metadata"]> = {},
): IstioObject {
  return object(
    "Sidecar",
    { egress: [{ hosts: ["./*", "istio-system/*"] }], ...spec },
    { name: "default", ...metadata },
  );
}

/** A valid Istio Gateway: one HTTP server for one host on port 80, with `spec` fields replaced. */
export function gateway(
  spec: Record<string, unknown> = {},
  metadata: Partial<IstioObject["metadata"]> & { annotations?: Record<string, string> } = {},
): IstioObject {
  return object(
    "Gateway",
    {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["bookinfo.example.com"] }],
      ...spec,
    },
    { name: "bookinfo", ...metadata },
  );
}

// ServiceEntry and WorkloadEntry builders.

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
