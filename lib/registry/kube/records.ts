/**
 * What ingest stores of Kubernetes objects between events, before they are joined into model
 * Endpoints: raw slice endpoints, pods, nodes, namespaces. Plain data, stored as JSON.
 */

/** Endpoint conditions with the API's defaults applied (a missing condition is true, terminating false). */
export interface RawConditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

/**
 * One endpoint address × one port, as an EndpointSlice or v1 Endpoints reports it, before the
 * pod and node it runs on are known. Sorted by (address, port, servicePortName) in a piece.
 */
export interface RawEndpoint {
  /** The address served (the first one: the API says a slice endpoint's addresses are fungible). */
  address: string;
  port: number;
  servicePortName: string;
  conditions: RawConditions;
  /** "" when the slice does not say. */
  nodeName: string;
  /** The slice's `zone`, "" when absent. */
  zone: string;
  /** Zone hints (topology-aware routing), kept for later use; [] when none. */
  zoneHints: readonly string[];
  /** The endpoint's DNS hostname (StatefulSet pods behind a headless service); absent when unset. */
  hostname?: string;
  /** The pod behind the endpoint (targetRef kind Pod); absent when the slice names none. */
  pod?: { namespace: string; name: string };
}

/** What one EndpointSlice (or v1 Endpoints object) contributes to its service's shard. */
export interface SlicePiece {
  /** The service the piece feeds (from the kubernetes.io/service-name label, or the Endpoints name). */
  serviceName: string;
  endpoints: RawEndpoint[];
  /**
   * The nodes its endpoints were joined with (their own or their pod's), sorted, so a Node change
   * reaches them; absent in a piece stored by an older version (its endpoints' own nodes count).
   */
  nodes?: string[];
}

/** What endpoints need of a Pod. */
export interface PodInfo {
  namespace: string;
  name: string;
  /** status.podIP, "" before it has one; podIPs for dual stack. */
  ips: string[];
  labels: Record<string, string>;
  /** spec.serviceAccountName ("default" when unset, as the API server fills it). */
  serviceAccount: string;
  nodeName: string;
  /** True once metadata.deletionTimestamp is set. */
  terminating: boolean;
  /**
   * Its `Ready` condition is "True" (Istio IsPodReady). Only a ServiceEntry's workloadSelector reads
   * it (Kubernetes endpoints take readiness from their slice); a record of an older version lacks it: ready.
   */
  ready?: boolean;
}

/** What endpoints need of a Node: its locality labels. */
export interface NodeInfo {
  name: string;
  region: string;
  zone: string;
  subzone: string;
}

/** What discovery selectors need of a Namespace. */
export interface NamespaceInfo {
  name: string;
  labels: Record<string, string>;
}

/** A Kubernetes LabelSelector (matchLabels AND matchExpressions), as meshConfig.discoverySelectors holds them. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
  }[];
}
