/** Kind handlers by Kubernetes kind. Kinds not listed are accepted and reported as ignored. */
import { endpointSliceHandler, endpointsHandler } from "./endpoints.ts";
import type { KindHandler } from "./handler.ts";
import { destinationRuleHandler, virtualServiceHandler } from "./istio-config.ts";
import { namespaceHandler } from "./namespace.ts";
import { nodeHandler } from "./node.ts";
import { podHandler } from "./pod.ts";
import { serviceHandler } from "./service.ts";
import { serviceEntryHandler } from "./service-entry.ts";
import { sidecarHandler } from "./sidecar.ts";
import { workloadEntryHandler } from "./workload-entry.ts";

/** A null-prototype record: a kind named "constructor" or "__proto__" finds no handler. */
export const kindHandlers: Readonly<Record<string, KindHandler>> = Object.assign(Object.create(null), {
  Service: serviceHandler,
  EndpointSlice: endpointSliceHandler,
  Endpoints: endpointsHandler,
  Pod: podHandler,
  Node: nodeHandler,
  Namespace: namespaceHandler,
  VirtualService: virtualServiceHandler,
  DestinationRule: destinationRuleHandler,
  ServiceEntry: serviceEntryHandler,
  WorkloadEntry: workloadEntryHandler,
  Sidecar: sidecarHandler,
});

export type { KindHandler, ObjectRef } from "./handler.ts";
