/** Service and port model: what a Kubernetes Service (or later a ServiceEntry) becomes. */

/** Protocols as Istio names them (pilot/pkg/model/protocol). */
export type Protocol =
  | "GRPC"
  | "GRPC-Web"
  | "HTTP"
  | "HTTP2"
  | "HTTPS"
  | "HTTP_PROXY"
  | "TCP"
  | "TLS"
  | "Mongo"
  | "MySQL"
  | "Redis"
  | "UDP"
  | "UnsupportedProtocol";

/**
 * How clients reach the service (Istio model.Resolution): load balanced by the proxy over known
 * endpoints (ClientSideLB), passed through to the address the client resolved (Passthrough:
 * headless, ServiceEntry NONE), resolved by DNS with every address used (DNSLB: ServiceEntry DNS)
 * or only the first (DNSRoundRobinLB: ServiceEntry DNS_ROUND_ROBIN), or an alias of another name.
 */
export type Resolution = "ClientSideLB" | "Passthrough" | "DNSLB" | "DNSRoundRobinLB" | "Alias";

/** One port of a service. `name` is what endpoints refer to as their service port name. */
export interface ServicePort {
  name: string;
  port: number;
  protocol: Protocol;
  /** The node port Kubernetes allocated (NodePort and LoadBalancer services); absent otherwise. */
  nodePort?: number;
}

/**
 * Kubernetes traffic distribution (spec.trafficDistribution or Istio's
 * networking.istio.io/traffic-distribution annotation); absent means any endpoint.
 */
export type TrafficDistribution = "PreferSameZone" | "PreferSameNode";

/**
 * A service as seen from one cluster. The same hostname may come from several clusters;
 * each contributes its own record and the generators combine them.
 */
export interface Service {
  /** `<name>.<namespace>.svc.<domain suffix>` */
  hostname: string;
  name: string;
  namespace: string;
  /** The cluster (shard) this record came from. */
  clusterId: string;
  resolution: Resolution;
  /** ClusterIPs (empty when headless). */
  addresses: string[];
  ports: ServicePort[];
  /** Sorted by key. */
  labels: Record<string, string>;
  // Optional fields below are present only when set (booleans only when true), always in this
  // order, so equal services serialize to equal JSON.
  /** Istio MeshExternal: an ExternalName service points outside the mesh. Absent = false. */
  meshExternal?: boolean;
  /** The DNS name an ExternalName service aliases. */
  externalName?: string;
  /**
   * Addresses that reach the service from outside the cluster (Istio ClusterExternalAddresses):
   * load balancer ingress IPs (or hostnames when there is no IP) and spec.externalIPs. Sorted, unique.
   */
  externalAddresses?: string[];
  /**
   * Namespaces the service is visible to (networking.istio.io/exportTo): "." = its own, "*" = all,
   * "~" = none, else a namespace name. Sorted, unique. Absent = public ("*").
   */
  exportTo?: string[];
  /** spec.publishNotReadyAddresses: every endpoint counts as ready. */
  publishNotReadyAddresses?: boolean;
  /** spec.internalTrafficPolicy Local: clients reach only endpoints on their own node. */
  nodeLocal?: boolean;
  trafficDistribution?: TrafficDistribution;
  /**
   * A ServiceEntry's subjectAltNames (Istio Service.ServiceAccounts): identities the server
   * certificate may carry, besides those of the endpoints' service accounts. Sorted, unique.
   */
  subjectAltNames?: string[];
}

/** The Istio hostname of a Kubernetes service. */
export function serviceHostname(name: string, namespace: string, domainSuffix: string): string {
  return `${name}.${namespace}.svc.${domainSuffix}`;
}

/** The namespace of a Kubernetes service hostname (`<name>.<ns>.svc.<suffix>`), else undefined (wildcards too). */
export function kubeServiceNamespace(hostname: string, domainSuffix: string): string | undefined {
  const suffix = `.svc.${domainSuffix}`;
  if (!hostname.endsWith(suffix) || hostname.includes("*")) return undefined;
  const labels = hostname.slice(0, -suffix.length).split(".");
  return labels.length === 2 && labels[0] !== "" && labels[1] !== "" ? labels[1] : undefined;
}
