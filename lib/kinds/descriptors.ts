/**
 * Every Kubernetes, Istio and Gateway API kind edgepilot knows, as data: where the API server
 * serves it, how the relay watches it, what the admission webhook does with it, how ingest counts
 * it and what a change of it pushes. A kind is named by its id (`kind`), its objects by group and
 * object kind (kindOfObject), so two groups' kinds of one name never meet. The relay's watch
 * list and discovery, its ClusterRole, the webhook's rules, ingest's accepted kinds and the
 * metrics labels are all read from this one table (test/unit/infra/kinds-infra.test.ts fails when
 * infra/k8s disagrees with it).
 *
 * Pure data with no imports: the relay loads it without loading the control plane. Each kind's
 * code (its validation and its ingest handler) is bound by id in lib/ingest/kinds/index.ts, which
 * fails to load unless it has one entry per kind named here.
 */

/**
 * How the relay watches a kind: always, only with RELAY_WATCH_ENDPOINTS, once discovery finds its
 * CRD, or `referenced`: one named object at a time, only while a Gateway names it (Secrets,
 * lib/relay/secret-refs.ts), never the whole kind.
 */
export type RelayWatch = "always" | "endpoints" | "crd" | "referenced";

/**
 * What the admission webhook does with a kind: `validate` answers allowed: false for an invalid
 * object (failurePolicy Fail, as istiod's webhook once ready); `observe` always allows and only
 * delivers the change (failurePolicy Ignore: the API server validates these kinds itself); `none`
 * is not heard at all (the mesh ConfigMap: the relay's watch delivers it, and a webhook on every
 * ConfigMap of the cluster would be far too wide).
 */
export type WebhookRole = "validate" | "observe" | "none";

/** What a change of the kind pushes (Istio's ConfigUpdate scope). */
export type PushScope =
  /** The endpoints and services it feeds (Kubernetes registry kinds; EDS-only where only endpoints move). */
  | "registry"
  /** The services its hosts name (ServiceEntry, VirtualService, DestinationRule): a Full push naming them. */
  | "services"
  /** The endpoints of the ServiceEntries selecting it (WorkloadEntry): EDS-only. */
  | "workload"
  /** The views of the proxies it applies to (Sidecar): no shared resource. */
  | "views"
  /**
   * The proxies it selects (PeerAuthentication, AuthorizationPolicy): no shared resource of a
   * service; a Full push naming it re-derives what those proxies' own listeners and clusters take from policy.
   */
  | "policy"
  /** The gateway proxies holding its SDS names (Secret): no shared resource, no service regenerated. */
  | "secrets"
  /** Mesh-wide settings (the mesh ConfigMap): a Full push of everything. */
  | "mesh"
  /**
   * The gateways it shapes (Istio Gateway, the Gateway API's Gateway, GatewayClass, ReferenceGrant):
   * a Full push naming it; no shared resource of a service, gateway proxies' snapshots re-derive
   * (lib/xds/gateway-snapshots.ts).
   */
  | "gateways";

/** One kind. */
export interface KindDescriptor {
  /**
   * The internal id: store keys, handler maps, metrics, resync's `kind=`. The object's own kind
   * unless two groups share one (the Gateway API's Gateway is `KubernetesGateway`, as istiod's gvk).
   */
  kind: string;
  /** The `kind` its objects and lists carry (`<objectKind>List`); the id unless set apart. */
  objectKind: string;
  /** "" for the core group (served under /api). */
  group: string;
  /** The versions the API server may serve it at, preferred (newest) first; the relay watches the first one served. */
  versions: readonly string[];
  /** The plural resource name in URLs, RBAC and webhook rules. */
  resource: string;
  namespaced: boolean;
  /** Whose events it is: the Kubernetes service registry, or Istio config (istiod's two informer families). */
  source: "registry" | "config";
  /** Its label in pilot_k8s_reg_events / pilot_k8s_cfg_events `type` (istiod's informer name). */
  metricsLabel: string;
  relay: RelayWatch;
  /**
   * Set for a kind the relay reads one object of: it watches only ISTIO_NAMESPACE with
   * `fieldSelector=metadata.name=<name>`, and its RBAC is a Role in that namespace, never cluster-wide.
   */
  watchOnly?: { namespace: "ISTIO_NAMESPACE"; name: string };
  webhook: WebhookRole;
  /** Subresources the webhook also hears (a pod's IP arrives through pods/status). */
  webhookSubresources?: readonly string[];
  push: PushScope;
  /**
   * The relay writes its status subresource (Gateway API status, as istiod): RBAC `update` on
   * `<resource>/status` (it PUTs at the resourceVersion it read; it reads with a list by name).
   */
  writesStatus?: true;
  /** The apiVersion strings an object may carry, preferred first: "v1", "discovery.k8s.io/v1", "networking.istio.io/v1beta1". */
  apiVersions: readonly string[];
}

const networkingIstio = "networking.istio.io";
/** networking.istio.io serves v1 from Istio 1.22; 1.18-1.21 serve v1beta1 and v1alpha3. */
const istioVersions = ["v1", "v1beta1", "v1alpha3"] as const;
const securityIstio = "security.istio.io";
/** security.istio.io serves v1 from Istio 1.22; older releases serve v1beta1 only (same spec). */
const securityVersions = ["v1", "v1beta1"] as const;

/** The Gateway API's group; every version Istio 1.30 reads (gvk VersionAliases) is listed, newest first. */
const gatewayApi = "gateway.networking.k8s.io";

type Declared = Omit<KindDescriptor, "apiVersions" | "objectKind"> & { objectKind?: string };

const core = (
  kind: string,
  resource: string,
  namespaced: boolean,
  metricsLabel: string,
  relay: RelayWatch,
  extra: Partial<Declared> = {},
): Declared => ({
  kind,
  group: "",
  versions: ["v1"],
  resource,
  namespaced,
  source: "registry",
  metricsLabel,
  relay,
  webhook: "observe",
  push: "registry",
  ...extra,
});

const istio = (
  kind: string,
  resource: string,
  push: PushScope,
  webhook: WebhookRole,
  group: { group: string; versions: readonly string[] } = { group: networkingIstio, versions: istioVersions },
): Declared => ({
  kind,
  group: group.group,
  versions: group.versions,
  resource,
  namespaced: true,
  source: "config",
  metricsLabel: kind,
  relay: "crd",
  webhook,
  push,
});

/**
 * A Gateway API kind: the API server validates it with the CRDs' CEL rules, so the webhook only
 * observes; its informer label is the object's kind (istiod's crdclient counts both Gateways as "Gateway").
 */
const gateway = (
  kind: string,
  resource: string,
  versions: readonly string[],
  push: PushScope,
  extra: Partial<Declared> = {},
): Declared => ({
  kind,
  group: gatewayApi,
  versions,
  resource,
  namespaced: true,
  source: "config",
  metricsLabel: extra.objectKind ?? kind,
  relay: "crd",
  webhook: "observe",
  push,
  ...extra,
});

const declared: readonly Declared[] = [
  core("Namespace", "namespaces", false, "Namespaces", "always"),
  core("Node", "nodes", false, "Nodes", "always"),
  core("Service", "services", true, "Services", "always", { webhookSubresources: ["status"] }),
  core("EndpointSlice", "endpointslices", true, "EndpointSlice", "always", {
    group: "discovery.k8s.io",
  }),
  core("Pod", "pods", true, "Pods", "always", { webhookSubresources: ["status"] }),
  core("Endpoints", "endpoints", true, "Endpoints", "endpoints"),
  // The mesh ConfigMap only (istiod's kubemesh watcher): never any other ConfigMap.
  core("ConfigMap", "configmaps", true, "ConfigMap", "always", {
    source: "config",
    watchOnly: { namespace: "ISTIO_NAMESPACE", name: "istio" },
    webhook: "none",
    push: "mesh",
  }),
  // Gateway credentials only, each Secret read by name while a Gateway names it (never listed).
  core("Secret", "secrets", true, "Secret", "referenced", {
    source: "config",
    webhook: "none",
    push: "secrets",
  }),
  istio("ServiceEntry", "serviceentries", "services", "validate"),
  istio("WorkloadEntry", "workloadentries", "workload", "validate"),
  istio("VirtualService", "virtualservices", "services", "validate"),
  istio("DestinationRule", "destinationrules", "services", "validate"),
  istio("Sidecar", "sidecars", "views", "validate"),
  istio("Gateway", "gateways", "gateways", "validate"),
  istio("PeerAuthentication", "peerauthentications", "policy", "validate", {
    group: securityIstio,
    versions: securityVersions,
  }),
  istio("AuthorizationPolicy", "authorizationpolicies", "policy", "validate", {
    group: securityIstio,
    versions: securityVersions,
  }),
  gateway("GatewayClass", "gatewayclasses", ["v1", "v1beta1", "v1alpha2"], "gateways", {
    namespaced: false,
    writesStatus: true,
  }),
  gateway("KubernetesGateway", "gateways", ["v1", "v1beta1", "v1alpha2"], "gateways", {
    objectKind: "Gateway",
    writesStatus: true,
  }),
  // Routes name services (their backends, and a Service parent for mesh routes): scoped by them.
  gateway("HTTPRoute", "httproutes", ["v1", "v1beta1", "v1alpha2"], "services", { writesStatus: true }),
  gateway("GRPCRoute", "grpcroutes", ["v1", "v1alpha2"], "services", { writesStatus: true }),
  // Istio 1.30 reads v1beta1 (and v1alpha2), not the v1 that Gateway API 1.5 also serves.
  gateway("ReferenceGrant", "referencegrants", ["v1beta1", "v1alpha2"], "gateways"),
];

/** Every kind, in the order the relay starts its watches (namespaces and nodes before what joins them). */
export const kindTable: readonly KindDescriptor[] = declared.map((d) => ({
  ...d,
  objectKind: d.objectKind ?? d.kind,
  apiVersions: d.versions.map((v) => (d.group === "" ? v : `${d.group}/${v}`)),
}));

/** The kinds by name (a null-prototype record: "constructor" finds nothing). */
export const kindsByName: Readonly<Record<string, KindDescriptor>> = Object.assign(
  Object.create(null),
  Object.fromEntries(kindTable.map((d) => [d.kind, d])),
);

/** The descriptor of the id `kind`, or undefined for a kind edgepilot does not know. */
export function kindOf(kind: string): KindDescriptor | undefined {
  return kindsByName[kind];
}

/** The kinds by object kind: one entry per group that serves it (a null-prototype record). */
const byObjectKind: Readonly<Record<string, readonly KindDescriptor[]>> = kindTable.reduce(
  (out, d) => {
    out[d.objectKind] = [...(out[d.objectKind] ?? []), d];
    return out;
  },
  Object.create(null) as Record<string, KindDescriptor[]>,
);

/** The group of an apiVersion: "" for the core group ("v1"), else the part before the slash. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/**
 * The kind an object is, by its group and `kind`: `networking.istio.io/v1 Gateway` is `Gateway`,
 * `gateway.networking.k8s.io/v1 Gateway` is `KubernetesGateway`. Undefined when no kind of that
 * object kind lives in that group (an unknown kind, or a known one under another group); the
 * version is not checked here (the descriptor's `apiVersions` say which are served).
 */
export function kindOfObject(apiVersion: string, objectKind: string): KindDescriptor | undefined {
  return kindInGroup(groupOf(apiVersion), objectKind);
}

/** The kind of `group` whose objects carry `objectKind`, if the table has one. */
export function kindInGroup(group: string, objectKind: string): KindDescriptor | undefined {
  return byObjectKind[objectKind]?.find((d) => d.group === group);
}

/** The kinds whose objects carry `objectKind`, in table order (none for an unknown one). */
export function kindsOfObject(objectKind: string): readonly KindDescriptor[] {
  return byObjectKind[objectKind] ?? [];
}
