/**
 * The inputs every Envoy sidecar generator shares (clusters, listeners, routes): the proxy as
 * istiod models it (pilot/pkg/model/context.go Proxy, ParseServiceNodeWithMetadata), its service
 * instances (GetProxyServiceInstances), the services it sees, and the mesh settings. Plain data,
 * so the generators stay pure and a test builds them with literals.
 */
import type { Filter } from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import type { HttpFilter } from "../../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { Endpoint, Service, ServicePort } from "../../../model/index.ts";
import type { SecurityPolicies } from "../../../registry/istio/security.ts";
import type { SidecarIngress } from "../../../registry/istio/sidecar.ts";
import type { ServiceView } from "../../types.ts";

/** Istio's NodeType, the first field of a node id: `sidecar` here (`router` is a gateway). */
export type ProxyType = "sidecar" | "router";

/**
 * A node id `<type>~<ip>~<id>~<dnsDomain>` split as istiod splits it
 * (ParseServiceNodeWithMetadata), e.g. `sidecar~10.0.0.5~productpage-v1-abc.default~default.svc.cluster.local`.
 */
export interface NodeIdParts {
  type: ProxyType;
  /** The second field: the proxy's first IP. */
  ip: string;
  /** The third field, `<pod>.<namespace>` for a Kubernetes pod. */
  id: string;
  /** The fourth field, `<namespace>.svc.<domain suffix>`. */
  dnsDomain: string;
}

/** The node metadata the sidecar generators read (Istio's NodeMetadata), already validated. */
export interface SidecarProxyMetadata {
  /** Metadata LABELS: the workload's pod labels (subsets and Sidecar selectors match on them). */
  labels: Readonly<Record<string, string>>;
  /** Metadata CLUSTER_ID: the cluster the proxy runs in. */
  clusterId?: string;
  /** Metadata ISTIO_VERSION. */
  istioVersion?: string;
  /** Metadata INTERCEPTION_MODE (REDIRECT unless TPROXY): inbound passthrough binds as Istio does. */
  interceptionMode?: "REDIRECT" | "TPROXY" | "NONE";
}

/** The proxy a sidecar configuration is generated for (Istio's model.Proxy, the parts used). */
export interface SidecarProxy {
  nodeId: string;
  parts: NodeIdParts;
  /** The node id's IP, then metadata INSTANCE_IPS, unique, in that order (Istio's IPAddresses). */
  ipAddresses: readonly string[];
  /** Metadata NAMESPACE, else the part of the id after its first dot (Istio's ConfigNamespace). */
  namespace: string;
  metadata: SidecarProxyMetadata;
}

/**
 * One service instance of the proxy (Istio's ServiceTarget): a service port served by an endpoint
 * at one of the proxy's IPs. `targetPort` is the endpoint's port (the container port), which the
 * inbound cluster `inbound|<targetPort>||` and the inbound filter chain are keyed by.
 */
export interface ServiceInstance {
  service: Service;
  servicePort: ServicePort;
  targetPort: number;
  endpoint: Endpoint;
}

/** MeshConfig.outboundTrafficPolicy.mode: unknown hosts pass through, or hit the black hole. */
export type OutboundTrafficMode = "ALLOW_ANY" | "REGISTRY_ONLY";

/** The mesh-wide settings the sidecar generators read (Istio's MeshConfig, the parts used). */
export interface SidecarMeshSettings {
  domainSuffix: string;
  outboundTrafficPolicy: OutboundTrafficMode;
  /** MeshConfig.connectTimeout in ms (Istio's default 10s): every cluster's connect_timeout. */
  connectTimeoutMs: number;
  /** MeshConfig.rootNamespace (istio-system): where mesh-wide Sidecars and rules live. */
  rootNamespace: string;
  /** MeshConfig.dnsRefreshRate in ms (Istio's default 60s): dns_refresh_rate of DNS clusters. */
  dnsRefreshRateMs?: number;
  /**
   * MeshConfig.enableAutoMtls (Istio's default true): clusters without a DestinationRule `tls` get
   * ISTIO_MUTUAL for sidecar endpoints, which needs the `sds-grpc` bootstrap cluster. false: plaintext.
   */
  enableAutoMtls?: boolean;
  /**
   * MeshConfig.trustDomain (TRUST_DOMAIN, Istio's default cluster.local) and trustDomainAliases: an
   * mTLS inbound chain accepts client certificates whose SPIFFE ID lies in one of them.
   */
  trustDomain?: string;
  trustDomainAliases?: readonly string[];
}

/**
 * The RBAC filters of a workload's AuthorizationPolicies (lib/resources/authz/ builds them), as
 * istiod's authz builder hands them to its inbound chains: HTTP filters go first in every inbound
 * HttpConnectionManager, network filters before every inbound tcp_proxy.
 */
export interface InboundAuthz {
  http: readonly HttpFilter[];
  tcp: readonly Filter[];
}

/** Istio's default trust domain. */
export const defaultTrustDomain = "cluster.local";

/**
 * Everything one sidecar's resources are generated from. `services` are the views visible to the
 * proxy (Sidecar egress and exportTo already applied), each with the VirtualService and
 * DestinationRule chosen for the proxy's namespace; proxies with equal `services`, `mesh` and
 * `security` get equal outbound resources, and only `proxy`/`instances` (with the policies that
 * select the proxy, and `authz`) shape the per-proxy inbound side.
 */
export interface SidecarInputs {
  proxy: SidecarProxy;
  instances: readonly ServiceInstance[];
  services: readonly ServiceView[];
  mesh: SidecarMeshSettings;
  /**
   * The Sidecar scoping the proxy, when it has ingress listeners (SidecarScope.HasIngressListener):
   * the inbound side is then built from them instead of the service instances.
   */
  ingress?: SidecarIngressScope;
  /**
   * The push's PeerAuthentications and AuthorizationPolicies (lib/registry/istio/security.ts): the
   * inbound chains follow the proxy's effective mTLS, auto mTLS each destination's; absent: no
   * policy (PERMISSIVE everywhere).
   */
  security?: SecurityPolicies;
  /** The RBAC filters of the proxy's AuthorizationPolicies for its inbound chains; absent: none. */
  authz?: InboundAuthz;
}

/** A Sidecar's name, namespace and its (non-empty) ingress listeners. */
export interface SidecarIngressScope {
  name: string;
  namespace: string;
  listeners: readonly SidecarIngress[];
}

/** Istio's defaults for the mesh settings (MeshConfig defaults: 10s connect timeout, ALLOW_ANY). */
export const defaultSidecarMesh: Readonly<SidecarMeshSettings> = Object.freeze({
  domainSuffix: "cluster.local",
  outboundTrafficPolicy: "ALLOW_ANY",
  connectTimeoutMs: 10_000,
  rootNamespace: "istio-system",
});
