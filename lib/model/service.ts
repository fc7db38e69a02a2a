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

/** How clients reach the service: load balanced by the proxy, or passed through (headless). */
export type Resolution = "ClientSideLB" | "Passthrough" | "DNSLB" | "Alias";

/** One port of a service. `name` is what endpoints refer to as their service port name. */
export interface ServicePort {
  name: string;
  port: number;
  protocol: Protocol;
}

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
  labels: Record<string, string>;
}

/** The Istio hostname of a Kubernetes service. */
export function serviceHostname(name: string, namespace: string, domainSuffix: string): string {
  return `${name}.${namespace}.svc.${domainSuffix}`;
}
