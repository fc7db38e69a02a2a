/** The kinds the relay lists and watches, where they live on the API server, and discovery of the optional ones. */

/** One watched kind: its group/version/resource and what its list is called. */
export interface KindSpec {
  kind: string;
  listKind: string;
  /** "" for the core group (served under /api). */
  group: string;
  version: string;
  /** The plural resource name in URLs and RBAC rules. */
  resource: string;
  /** Why the kind is not always watched: "endpoints" behind a flag, "istio" when its CRD is served. */
  optional?: "endpoints" | "istio";
}

const spec = (
  kind: string,
  group: string,
  version: string,
  resource: string,
  optional?: KindSpec["optional"],
) => ({ kind, listKind: `${kind}List`, group, version, resource, ...(optional && { optional }) }) as KindSpec;

/** Always watched, in the order they are started. */
export const coreKinds: readonly KindSpec[] = [
  spec("Namespace", "", "v1", "namespaces"),
  spec("Node", "", "v1", "nodes"),
  spec("Service", "", "v1", "services"),
  spec("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices"),
  spec("Pod", "", "v1", "pods"),
];

/** v1 Endpoints: watched only when asked for (RELAY_WATCH_ENDPOINTS / --endpoints). */
export const endpointsKind: KindSpec = spec("Endpoints", "", "v1", "endpoints", "endpoints");

/** The Istio group and version the relay watches. */
export const istioGroupVersion = { group: "networking.istio.io", version: "v1" } as const;

/** Istio networking kinds: watched when API discovery shows their CRDs are served. */
export const istioKinds: readonly KindSpec[] = [
  spec("VirtualService", istioGroupVersion.group, "v1", "virtualservices", "istio"),
  spec("DestinationRule", istioGroupVersion.group, "v1", "destinationrules", "istio"),
  spec("ServiceEntry", istioGroupVersion.group, "v1", "serviceentries", "istio"),
  spec("Sidecar", istioGroupVersion.group, "v1", "sidecars", "istio"),
  spec("Gateway", istioGroupVersion.group, "v1", "gateways", "istio"),
];

/** The cluster-wide collection path: /api/v1/pods, /apis/discovery.k8s.io/v1/endpointslices. */
export function kindPath(k: KindSpec): string {
  return k.group === "" ? `/api/${k.version}/${k.resource}` : `/apis/${k.group}/${k.version}/${k.resource}`;
}

/** Whether an /apis APIGroupList serves the Istio group at the version we watch. */
export function servesIstioGroup(groupList: unknown): boolean {
  const groups = (groupList as { groups?: unknown } | null)?.groups;
  if (!Array.isArray(groups)) return false;
  return groups.some(
    (g: { name?: unknown; versions?: { version?: unknown }[] }) =>
      g?.name === istioGroupVersion.group &&
      Array.isArray(g.versions) &&
      g.versions.some((v) => v?.version === istioGroupVersion.version),
  );
}

/** The Istio kinds an APIResourceList of networking.istio.io/v1 serves, in istioKinds order. */
export function istioKindsServed(resourceList: unknown): KindSpec[] {
  const resources = (resourceList as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) return [];
  const names = new Set(
    resources.map((r: { name?: unknown }) => r?.name).filter((n) => typeof n === "string"),
  );
  return istioKinds.filter((k) => names.has(k.resource));
}
