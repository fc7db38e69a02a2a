/** Shared xDS types: what generators take and give, and what the store holds per resource. */

import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import type { Service } from "../model/index.ts";
import type { DestinationRuleModel } from "../registry/istio/destination-rule.ts";
import type { DestinationHost } from "../registry/istio/route-destinations.ts";
import type { SecurityPolicies } from "../registry/istio/security.ts";
import type { VirtualServiceModel } from "../registry/istio/virtual-service.ts";
import type { EndpointShardsRecord } from "../shards/shards-record.ts";
import type { NetworkResolver } from "./network-resolve.ts";
import type { TypeUrl } from "./xds-types.ts";

/** Everything the generators need about one service: every cluster's record and its endpoints. */
export interface ServiceView {
  hostname: string;
  namespace: string;
  /** One record per cluster that has the service; empty when the service is gone. */
  services: Service[];
  /** Undefined when no endpoints were ever reported. */
  shards: EndpointShardsRecord | undefined;
  /**
   * The VirtualService whose HTTP routes this host gets (chosen by the caller, e.g. with
   * createVirtualServiceHostIndex). Absent: the single default route, exactly as without Istio config.
   */
  virtualService?: VirtualServiceModel;
  /**
   * The DestinationRule (merged, as ConsolidatedDestinationRule.rule) for this host: its subsets
   * become clusters and assignments, its traffic policies shape the clusters and the routes' hash
   * policy. Absent: clusters exactly as without Istio config.
   */
  destinationRule?: DestinationRuleModel;
  /**
   * Ports of the other hosts the VirtualService routes to (host ─▶ its service ports), so a
   * destination without a port names the cluster of that service's only port, as istiod does.
   * A host missing here gets the listener's port.
   */
  destinationPorts?: Readonly<Record<string, readonly number[]>>;
  /**
   * What the other hosts the VirtualService routes to publish (ports, their DestinationRule's
   * subsets), so a route naming a cluster nobody publishes fails at once (route-vs.ts). A host
   * missing here is not judged: its clusters are named as they are.
   */
  destinationHosts?: Readonly<Record<string, DestinationHost>>;
  /**
   * The push's PeerAuthentications, when there are any: proxyless auto-mTLS (generators/cluster-tls.ts)
   * stays off toward a port an endpoint's workload takes with DISABLE. Absent: PERMISSIVE everywhere.
   */
  peerMtls?: Pick<SecurityPolicies, "mtlsForPort">;
}

/** Options that shape generated resources. */
export interface GenerateContext {
  domainSuffix: string;
  /** MeshConfig.enableAutoMtls as the push's effective mesh has it; absent: on (Istio's default). */
  enableAutoMtls?: boolean;
  /**
   * The push's network table as a resolver (lib/resources/network-resolve.ts), when the mesh has
   * networks: assignments then carry each endpoint's network. Absent: no network metadata at all.
   */
  networks?: NetworkResolver;
}

/** One generated resource, still a protobuf-es message. */
export interface Generated<Desc extends DescMessage = DescMessage> {
  name: string;
  schema: Desc;
  message: MessageShape<Desc>;
}

/** A generator: pure, one per type URL, service view in, resources out. */
export interface Generator {
  typeUrl: TypeUrl;
  generate(view: ServiceView, ctx: GenerateContext): Generated[];
}

/** A published resource as the store holds it under keys.resource(). */
export interface StoredResource {
  typeUrl: TypeUrl;
  name: string;
  /** Content hash of `body` (see version.ts): equal bytes, equal version, on every runtime. */
  version: string;
  /** The serialized resource (binary protobuf). */
  body: Uint8Array;
  /** `<namespace>/<hostname>` of the service that generated it. */
  service: string;
}

/** What one proxy was last sent for one type URL. `versions`: resource name ─▶ content hash. */
export interface SentStatus {
  versionInfo: string;
  nonce: string;
  versions: Record<string, string>;
}

/** The last NACK of one type URL: the version the proxy kept, the nonce it rejected, why. */
export interface NackStatus {
  versionInfo: string;
  nonce: string;
  message: string;
}

/** One type URL of one stream: subscription, last sent, last ACKed, last NACK. */
export interface ProxyTypeStatus {
  typeUrl: string;
  /** True for a wildcard subscription (LDS/CDS only). */
  wildcard: boolean;
  /** Explicitly subscribed names, sorted ("*" excluded; see `wildcard`); cut when `subscribedCount` is set. */
  subscribed: string[];
  /** Set when `subscribed` lists only some names (a bounded report): how many there are. */
  subscribedCount?: number;
  sent?: SentStatus;
  /** Set when `sent.versions` lists only some resources (a bounded report): how many were sent. */
  sentCount?: number;
  /** The version_info the proxy last ACKed (or reported on its first request of a stream). */
  ackedVersion?: string;
  /** Cleared by the next ACK. */
  nack?: NackStatus;
}

/** A proxy's xDS state on one stream, as plain data (storable under keys.proxy(nodeId)). */
export interface ProxyStatus {
  nodeId: string;
  /** Node metadata GENERATOR (`grpc` for proxyless gRPC), "" when absent. */
  generator: string;
  /** Node metadata CLUSTER_ID (the proxy's cluster, as istiod's SyncStatus cluster_id), when set. */
  cluster?: string;
  /** Node metadata ISTIO_VERSION, when set. */
  istioVersion?: string;
  /** Node metadata NETWORK, when set. */
  network?: string;
  /** Node metadata REQUESTED_NETWORK_VIEW (its networks comma-joined, sorted), when set. */
  networkView?: string;
  /** A `router~` node's metadata LABELS: the Gateways it is served are the ones selecting them. */
  labels?: Record<string, string>;
  /** In push order (CDS, EDS, LDS, RDS), then any other type URL the proxy asked for, sorted. */
  types: ProxyTypeStatus[];
}
