/**
 * Every Kubernetes and Istio kind edgepilot knows, as data: where the API server serves it, how
 * the relay watches it, what the admission webhook does with it, how ingest counts it and what a
 * change of it pushes. The relay's watch list and discovery, its ClusterRole, the webhook's rules,
 * ingest's accepted kinds and the metrics labels are all read from this one table
 * (test/unit/infra/kinds-infra.test.ts fails when infra/k8s disagrees with it).
 *
 * Pure data with no imports: the relay loads it without loading the control plane. Each kind's
 * code (its validation and its ingest handler) is bound by name in lib/ingest/kind-code.ts, whose
 * type requires one entry per kind named here.
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
  /** Nothing yet: accepted and checked, not converted. */
  | "none";

/** One kind. */
export interface KindDescriptor {
  kind: string;
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
  /** The apiVersion strings an object may carry, preferred first: "v1", "discovery.k8s.io/v1", "networking.istio.io/v1beta1". */
  apiVersions: readonly string[];
}

const networkingIstio = "networking.istio.io";
/** networking.istio.io serves v1 from Istio 1.22; 1.18-1.21 serve v1beta1 and v1alpha3. */
const istioVersions = ["v1", "v1beta1", "v1alpha3"] as const;
const securityIstio = "security.istio.io";
/** security.istio.io serves v1 from Istio 1.22; older releases serve v1beta1 only (same spec). */
const securityVersions = ["v1", "v1beta1"] as const;

type Declared = Omit<KindDescriptor, "apiVersions">;

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
  // Checked for metadata only until gateways are built: nothing to deny, so it is only observed.
  istio("Gateway", "gateways", "none", "observe"),
  istio("PeerAuthentication", "peerauthentications", "policy", "validate", {
    group: securityIstio,
    versions: securityVersions,
  }),
  istio("AuthorizationPolicy", "authorizationpolicies", "policy", "validate", {
    group: securityIstio,
    versions: securityVersions,
  }),
];

/** Every kind, in the order the relay starts its watches (namespaces and nodes before what joins them). */
export const kindTable: readonly KindDescriptor[] = declared.map((d) => ({
  ...d,
  apiVersions: d.versions.map((v) => (d.group === "" ? v : `${d.group}/${v}`)),
}));

/** The kinds by name (a null-prototype record: "constructor" finds nothing). */
export const kindsByName: Readonly<Record<string, KindDescriptor>> = Object.assign(
  Object.create(null),
  Object.fromEntries(kindTable.map((d) => [d.kind, d])),
);

/** The descriptor of `kind`, or undefined for a kind edgepilot does not know. */
export function kindOf(kind: string): KindDescriptor | undefined {
  return kindsByName[kind];
}
