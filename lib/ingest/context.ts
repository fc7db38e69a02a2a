/** What every kind handler gets: the store, the clock, the registry options, and the cluster of the call. */
import type { PushRequest, ShardKey } from "../model/index.ts";
import type { Pace } from "../pace.ts";
import type { LabelSelector } from "../registry/kube/records.ts";
import type { Store } from "../store/index.ts";
import type { RoutingChanges } from "./dangling.ts";
import type { DeferredSlices } from "./deferred-slices.ts";

/** How Kubernetes objects are read, with Istio's defaults. */
export interface RegistryOptions {
  /** DOMAIN_SUFFIX: hostnames are `<name>.<ns>.svc.<suffix>`. */
  domainSuffix: string;
  /** TRUST_DOMAIN: service accounts are `spiffe://<trust domain>/ns/<ns>/sa/<sa>`. */
  trustDomain: string;
  /** PILOT_SEND_UNHEALTHY_ENDPOINTS: serve not-ready endpoints with their health status. */
  sendUnhealthy: boolean;
  /** PILOT_USE_ENDPOINT_SLICE: endpoints from EndpointSlices (true) or from v1 Endpoints (false). */
  useEndpointSlice: boolean;
  /** meshConfig discoverySelectors: when any are set, only namespaces matching one are served. */
  discoverySelectors: LabelSelector[];
  /**
   * meshConfig enableAutoMtls (EDGEPILOT_ENABLE_AUTO_MTLS, on as in Istio): Envoy sidecars send
   * ISTIO_MUTUAL to endpoints that have a sidecar, where no DestinationRule sets `tls`.
   */
  enableAutoMtls?: boolean;
  /**
   * ISTIO_NAMESPACE (istio-system when unset): where the mesh ConfigMap `istio` is read, and the
   * namespace whose topology.istio.io/network label is its cluster's network.
   */
  istioNamespace?: string;
  /**
   * MESH_CONFIG_FILE / MESH_NETWORKS_FILE when set: a file owns its key, so the ConfigMap's value
   * for that key is ignored (lib/ingest/kinds/mesh-configmap.ts).
   */
  meshFiles?: { mesh?: string; meshNetworks?: string };
}

export const defaultRegistryOptions: RegistryOptions = {
  domainSuffix: "cluster.local",
  trustDomain: "cluster.local",
  sendUnhealthy: false,
  useEndpointSlice: true,
  discoverySelectors: [],
};

export interface IngestContext {
  store: Store;
  now: () => number;
  registry: RegistryOptions;
  cluster: string;
  shard: ShardKey;
  /** Awaited inside large per-object work (a shard of thousands of endpoints), see lib/pace.ts. */
  pace?: Pace;
  /**
   * Where handlers note, once each, the field paths a config sets that edgepilot accepts but does
   * not implement (`<kind> <ns>/<name>: <path>`); the batch's summary lists them as `unsupported`.
   */
  unsupported?: Set<string>;
  /** Where the VirtualService/DestinationRule handlers note what may make routes dangle (dangling.ts). */
  routing?: RoutingChanges;
  /**
   * Where slice events note their changes for one refresh per service (deferred-slices.ts); without
   * it each slice event refreshes its shard at once. Set by applyEvents, which flushes it.
   */
  slices?: DeferredSlices;
}

/** What applying one object did: nothing new, ignored by design, or applied with the push it needs. */
export type Outcome =
  | { kind: "applied"; push: PushRequest | undefined; data?: Record<string, string> }
  | { kind: "unchanged" }
  | { kind: "ignored"; reason: string };
