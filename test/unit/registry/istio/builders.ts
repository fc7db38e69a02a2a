/** Builders for Istio networking objects as the API server hands them over, with overrides. */

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
