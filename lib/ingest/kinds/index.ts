/**
 * Each kind's code, bound to its descriptor (lib/kinds/descriptors.ts) by name: how an object of
 * it is checked beyond its metadata, and the handler that applies it. A kind with no check is read
 * for its metadata only; a kind with no handler is accepted and reported as ignored. Loading this
 * module fails when a descriptor has no entry here or an entry names no descriptor.
 */
import { kindTable } from "../../kinds/descriptors.ts";
import type { Check } from "../../registry/check.ts";
import { gatewayClassCheck } from "../../registry/gateway-api/validate-gateway-class.ts";
import { grpcRouteCheck } from "../../registry/gateway-api/validate-grpc-route.ts";
import { httpRouteCheck } from "../../registry/gateway-api/validate-http-route.ts";
import { kubernetesGatewayCheck } from "../../registry/gateway-api/validate-kubernetes-gateway.ts";
import { referenceGrantCheck } from "../../registry/gateway-api/validate-reference-grant.ts";
import { authorizationPolicyCheck } from "../../registry/istio/validate-authorization-policy.ts";
import { destinationRuleCheck } from "../../registry/istio/validate-destination-rule.ts";
import { gatewayCheck } from "../../registry/istio/validate-gateway.ts";
import { peerAuthenticationCheck } from "../../registry/istio/validate-peer-authentication.ts";
import { serviceEntryCheck } from "../../registry/istio/validate-service-entry.ts";
import { sidecarCheck } from "../../registry/istio/validate-sidecar.ts";
import { virtualServiceCheck } from "../../registry/istio/validate-virtual-service.ts";
import { workloadEntryCheck } from "../../registry/istio/validate-workload-entry.ts";

import { meshConfigMapCheck } from "../../registry/mesh/istio-configmap.ts";
import { secretCheck } from "../secret-verify.ts";
import { endpointSliceCheck, endpointsCheck } from "../validate-endpoints.ts";
import { podCheck } from "../validate-pod.ts";
import { serviceCheck } from "../validate-service.ts";
import { endpointSliceHandler, endpointsHandler } from "./endpoints.ts";
import { gatewayApiHandlers } from "./gateway-api.ts";
import type { KindHandler } from "./handler.ts";
import { destinationRuleHandler, virtualServiceHandler } from "./istio-config.ts";
import { istioGatewayHandler } from "./istio-gateway.ts";
import { meshConfigMapHandler } from "./mesh-configmap.ts";
import { namespaceHandler } from "./namespace.ts";
import { nodeHandler } from "./node.ts";
import { podHandler } from "./pod.ts";
import { secretHandler } from "./secret.ts";
import { authorizationPolicyHandler, peerAuthenticationHandler } from "./security-policy.ts";
import { serviceHandler } from "./service.ts";
import { serviceEntryHandler } from "./service-entry.ts";
import { sidecarHandler } from "./sidecar.ts";
import { workloadEntryHandler } from "./workload-entry.ts";

/** A kind's code: its check (the API server's or istiod's rules for its fields) and its handler. */
export interface KindCode {
  check?: Check;
  handler?: KindHandler;
}

const code: Record<string, KindCode> = {
  Namespace: { handler: namespaceHandler },
  Node: { handler: nodeHandler },
  Service: { check: serviceCheck, handler: serviceHandler },
  EndpointSlice: { check: endpointSliceCheck, handler: endpointSliceHandler },
  Pod: { check: podCheck, handler: podHandler },
  Endpoints: { check: endpointsCheck, handler: endpointsHandler },
  ServiceEntry: { check: serviceEntryCheck, handler: serviceEntryHandler },
  WorkloadEntry: { check: workloadEntryCheck, handler: workloadEntryHandler },
  VirtualService: { check: virtualServiceCheck, handler: virtualServiceHandler },
  DestinationRule: { check: destinationRuleCheck, handler: destinationRuleHandler },
  Sidecar: { check: sidecarCheck, handler: sidecarHandler },
  ConfigMap: { check: meshConfigMapCheck, handler: meshConfigMapHandler },
  Secret: { check: secretCheck, handler: secretHandler },
  Gateway: { check: gatewayCheck, handler: istioGatewayHandler },
  PeerAuthentication: { check: peerAuthenticationCheck, handler: peerAuthenticationHandler },
  AuthorizationPolicy: { check: authorizationPolicyCheck, handler: authorizationPolicyHandler },
  GatewayClass: { check: gatewayClassCheck, handler: gatewayApiHandlers.GatewayClass },
  KubernetesGateway: { check: kubernetesGatewayCheck, handler: gatewayApiHandlers.KubernetesGateway },
  HTTPRoute: { check: httpRouteCheck, handler: gatewayApiHandlers.HTTPRoute },
  GRPCRoute: { check: grpcRouteCheck, handler: gatewayApiHandlers.GRPCRoute },
  ReferenceGrant: { check: referenceGrantCheck, handler: gatewayApiHandlers.ReferenceGrant },
};

const declared = new Set(kindTable.map((d) => d.kind));
const missing = [...declared].filter((k) => !Object.hasOwn(code, k));
const extra = Object.keys(code).filter((k) => !declared.has(k));
if (missing.length > 0 || extra.length > 0)
  throw new Error(
    `lib/ingest/kinds/index.ts and lib/kinds/descriptors.ts disagree: no code for [${missing.join(", ")}], no descriptor for [${extra.join(", ")}]`,
  );

/** Null-prototype records: a kind named "constructor" or "__proto__" finds nothing. */
const byKind = <T>(pick: (c: KindCode) => T | undefined): Readonly<Record<string, T>> =>
  Object.assign(
    Object.create(null),
    Object.fromEntries(
      Object.entries(code).flatMap(([kind, c]) => {
        const v = pick(c);
        return v === undefined ? [] : [[kind, v]];
      }),
    ),
  );

/** Handlers by kind. Kinds not listed are accepted and reported as ignored. */
export const kindHandlers: Readonly<Record<string, KindHandler>> = byKind((c) => c.handler);

/** Field checks by kind, beyond the metadata every kind gets. */
export const kindChecks: Readonly<Record<string, Check>> = byKind((c) => c.check);

export type { KindHandler, ObjectRef } from "./handler.ts";
