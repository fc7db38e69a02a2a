/**
 * The parts of Kubernetes objects we read, typed exactly as the API server serializes them
 * (JSON field names; a field is optional where the Go type has `omitempty` or is a pointer).
 * Only what the registry reads is typed; anything else on the wire is ignored, not rejected.
 */

/** core/v1 Protocol of a port. */
export type KubeProtocol = "TCP" | "UDP" | "SCTP";

/** A reference to the object that owns or backs another (core/v1 ObjectReference). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** metav1.OwnerReference, as the endpointslice controller sets it on managed slices. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ObjectMeta: what identifies an object and what we route on. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

/** ObjectMeta of a namespaced kind: the API server always fills in the namespace. */
export interface NamespacedObjectMeta extends ObjectMeta {
  namespace: string;
}

// ---- v1 Service -------------------------------------------------------------------------

/** core/v1 ServiceType; the API server defaults it to ClusterIP. */
export type ServiceType = "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName";

/** The value of `spec.clusterIP` that makes a service headless. */
export const CLUSTER_IP_NONE = "None";

/** core/v1 ServicePort. `targetPort` is an IntOrString: a number or a container port name. */
export interface KubeServicePort {
  name?: string;
  protocol?: KubeProtocol;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

/** core/v1 ServiceSpec (the fields the registry reads, and their close neighbours). */
export interface KubeServiceSpec {
  type?: ServiceType;
  clusterIP?: string;
  clusterIPs?: string[];
  ports?: KubeServicePort[];
  selector?: Record<string, string>;
  externalName?: string;
  /** Addresses outside the cluster that route to the service (not managed by Kubernetes). */
  externalIPs?: string[];
  loadBalancerIP?: string;
  allocateLoadBalancerNodePorts?: boolean;
  ipFamilies?: ("IPv4" | "IPv6")[];
  ipFamilyPolicy?: "SingleStack" | "PreferDualStack" | "RequireDualStack";
  publishNotReadyAddresses?: boolean;
  sessionAffinity?: "ClientIP" | "None";
  internalTrafficPolicy?: "Cluster" | "Local";
  externalTrafficPolicy?: "Cluster" | "Local";
  trafficDistribution?: string;
}

/** core/v1 LoadBalancerIngress: an IP or a hostname (or, rarely, both) the load balancer answers on. */
export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ipMode?: "VIP" | "Proxy";
  ports?: { port: number; protocol: KubeProtocol; error?: string }[];
}

/** v1 Service as a watch event or admission request carries it. */
export interface KubeService {
  apiVersion: "v1";
  kind: "Service";
  metadata: NamespacedObjectMeta;
  spec: KubeServiceSpec;
  status?: { loadBalancer?: { ingress?: LoadBalancerIngress[] } };
}

// ---- discovery.k8s.io/v1 EndpointSlice ---------------------------------------------------

/** discovery/v1 AddressType: what kind of address every endpoint of a slice carries. */
export type AddressType = "IPv4" | "IPv6" | "FQDN";

/** The label the endpointslice controller sets to the name of the owning Service. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** discovery/v1 EndpointConditions. A missing condition means "unknown", see each field. */
export interface EndpointConditions {
  /** Missing means ready (the API's own rule). */
  ready?: boolean;
  /** Missing means the same as ready. */
  serving?: boolean;
  /** Missing means not terminating. */
  terminating?: boolean;
}

/** discovery/v1 EndpointHints. */
export interface EndpointHints {
  forZones?: { name: string }[];
  forNodes?: { name: string }[];
}

/** discovery/v1 Endpoint: one backend with one or more fungible addresses. */
export interface SliceEndpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: EndpointHints;
}

/** discovery/v1 EndpointPort. Every field is a pointer in Go, so any may be missing. */
export interface SliceEndpointPort {
  name?: string;
  protocol?: KubeProtocol;
  port?: number;
  appProtocol?: string;
}

/**
 * discovery.k8s.io/v1 EndpointSlice. `endpoints` and `ports` have no `omitempty`, so an empty
 * list arrives as `null`.
 */
export interface EndpointSlice {
  apiVersion: "discovery.k8s.io/v1";
  kind: "EndpointSlice";
  metadata: NamespacedObjectMeta;
  addressType: AddressType;
  endpoints: SliceEndpoint[] | null;
  ports?: SliceEndpointPort[] | null;
}

// ---- v1 Endpoints -----------------------------------------------------------------------

/** core/v1 EndpointAddress. */
export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

/** core/v1 EndpointPort. `name` may be empty only when the subset has one port. */
export interface EndpointsPort {
  name?: string;
  port: number;
  protocol?: KubeProtocol;
  appProtocol?: string;
}

/** core/v1 EndpointSubset: every address × every port. */
export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointsPort[];
}

/** v1 Endpoints: named after the Service it belongs to. No subsets at all arrives without the field. */
export interface KubeEndpoints {
  apiVersion: "v1";
  kind: "Endpoints";
  metadata: NamespacedObjectMeta;
  subsets?: EndpointSubset[];
}

// ---- v1 Pod, Node, Namespace (only what the registry reads) -------------------------------

/** core/v1 PodPhase. */
export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

/** v1 Pod: identity, labels, where it runs, who it runs as and its addresses. */
export interface KubePod {
  apiVersion: "v1";
  kind: "Pod";
  metadata: NamespacedObjectMeta;
  spec?: {
    nodeName?: string;
    serviceAccountName?: string;
    /** Deprecated alias of serviceAccountName; the API server keeps both in step. */
    serviceAccount?: string;
    hostname?: string;
    subdomain?: string;
  };
  status?: {
    phase?: PodPhase;
    podIP?: string;
    /** The pod's IPs, primary (= podIP) first; two for a dual-stack pod. */
    podIPs?: { ip: string }[];
    /** Pod conditions; the `Ready` one says whether the pod is ready (Istio IsPodReady). */
    conditions?: { type: string; status: "True" | "False" | "Unknown" }[];
  };
}

/** v1 Node: only its labels matter (topology). Cluster-scoped: no namespace. */
export interface KubeNode {
  apiVersion: "v1";
  kind: "Node";
  metadata: ObjectMeta;
}

/** v1 Namespace: only its labels matter (discovery selectors). Cluster-scoped. */
export interface KubeNamespace {
  apiVersion: "v1";
  kind: "Namespace";
  metadata: ObjectMeta;
  status?: { phase?: "Active" | "Terminating" };
}
