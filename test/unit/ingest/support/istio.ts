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

/** A WorkloadEntry with the given spec. */
export function workloadEntry(name: string, spec: Record<string, unknown>, namespace = "default") {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: meta(name, namespace, "1"),
    spec,
  };
}
