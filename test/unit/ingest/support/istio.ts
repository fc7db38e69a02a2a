/** Builders for Istio networking objects as a watch delivers them. */

const meta = (name: string, namespace: string, resourceVersion: string) => ({
  name,
  namespace,
  resourceVersion,
});

/** A VirtualService for `host` (short name, resolved in `namespace`) with the given spec fields. */
export function virtualService(
  name: string,
  spec: Record<string, unknown>,
  o: { namespace?: string; resourceVersion?: string; hosts?: string[] } = {},
) {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: meta(name, o.namespace ?? "default", o.resourceVersion ?? "1"),
    spec: { hosts: o.hosts ?? [name], ...spec },
  };
}

/** A DestinationRule for `host` with subsets and optional extra spec fields. */
export function destinationRule(
  host: string,
  subsets: unknown[],
  o: { namespace?: string; resourceVersion?: string; name?: string; spec?: Record<string, unknown> } = {},
) {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "DestinationRule",
    metadata: meta(o.name ?? host, o.namespace ?? "default", o.resourceVersion ?? "1"),
    spec: { host, subsets, ...o.spec },
  };
}

/** A WorkloadEntry with the given spec (metadata labels and resourceVersion optional). */
export function workloadEntry(
  name: string,
  spec: Record<string, unknown>,
  namespace = "default",
  o: { resourceVersion?: string; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { ...meta(name, namespace, o.resourceVersion ?? "1"), ...(o.labels && { labels: o.labels }) },
    spec,
  };
}

/** A ServiceEntry: MESH_INTERNAL `hosts` on one grpc port 9080, STATIC, with `spec` fields replaced by the overrides. */
export function serviceEntry(
  name: string,
  spec: Record<string, unknown> = {},
  o: { namespace?: string; resourceVersion?: string; creationTimestamp?: string } = {},
) {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: {
      ...meta(name, o.namespace ?? "default", o.resourceVersion ?? "1"),
      ...(o.creationTimestamp && { creationTimestamp: o.creationTimestamp }),
    },
    spec: {
      hosts: [`${name}.example.com`],
      location: "MESH_INTERNAL",
      ports: [{ name: "grpc", number: 9080, protocol: "GRPC" }],
      resolution: "STATIC",
      ...spec,
    },
  };
}
