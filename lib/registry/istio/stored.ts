/** Istio configs as the store holds them (ingest writes them, the push reads them). */
import type { IstioConfig, IstioKind } from "./common.ts";
import type { ServiceEntrySpec } from "./service-entry.ts";
import type { WorkloadEntrySpec } from "./workload-entry.ts";

/** The routing kinds (VirtualService, DestinationRule). */
export type RoutingKind = "VirtualService" | "DestinationRule";

/** One cluster's copy of a config as stored: IstioConfig, with the creation time istiod orders by. */
export interface StoredConfig<K extends IstioKind = RoutingKind, S = unknown> extends IstioConfig<S> {
  kind: K;
  creationTimestamp?: string;
  /** metadata.generation (Gateway API status observedGeneration). */
  generation?: number;
  /**
   * A Gateway the Gateway API translation made: the hostnames of the Services whose instances (in
   * its namespace) it applies to, in place of a selector (istiod's internal.istio.io/gateway-service).
   */
  gatewayServices?: string[];
  /** An AuthorizationPolicy's `istio.io/dry-run` annotation, when true: evaluated, never enforced. */
  dryRun?: true;
}

/** A ServiceEntry as stored. */
export type StoredServiceEntry = StoredConfig<"ServiceEntry", ServiceEntrySpec>;
/** A WorkloadEntry as stored. */
export type StoredWorkloadEntry = StoredConfig<"WorkloadEntry", WorkloadEntrySpec>;
