/**
 * A VirtualService's HTTP routes for one listener port as Envoy routes, as istiod's translateRoute
 * builds them for a proxyless gRPC client (BuildHTTPRoutesForVirtualService, applyHTTPRouteDestination,
 * setTimeout, retry.ConvertPolicy, TranslateFault, consistentHashToHashPolicy), limited to what a
 * RouteConfiguration shared by every client can say and what grpc-js-xds accepts.
 */
import {
  RetryPolicySchema,
  type Route,
  type RouteAction,
  type RouteAction_HashPolicy,
  RouteAction_HashPolicy_HeaderSchema,
  RouteAction_HashPolicySchema,
  RouteAction_MaxStreamDurationSchema,
  RouteActionSchema,
  RouteSchema,
  WeightedCluster_ClusterWeightSchema,
  WeightedClusterSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import { effectivePolicy, routeConsistentHash } from "../../registry/istio/destination-rule.ts";
import {
  destinationCluster,
  type FaultPolicy,
  type FlatRoute,
  type RetryPolicy,
  type RouteDestination,
  routesForPort,
} from "../../registry/istio/virtual-service.ts";
import type { ServiceView } from "../types.ts";
import { durationOf } from "./cluster-policy.ts";
import { FAULT_FILTER_NAME, faultConfig } from "./route-fault.ts";
import { expressible, routeMatch } from "./route-match.ts";
import { mergedPorts, message } from "./shared.ts";

/** The Envoy routes of the view's VirtualService for `port`, in order; empty without one. */
export function virtualServiceRoutes(view: ServiceView, port: number): Route[] {
  const vs = view.virtualService;
  if (!vs) return [];
  const out: Route[] = [];
  for (const flat of routesForPort(vs, port)) {
    if (flat.match && !expressible(flat.match)) continue;
    const r = translateRoute(view, flat, port);
    if (r) out.push(r);
  }
  return out;
}

/** Whether the port's routes use the fault filter (the listener then runs it before the router). */
export function routesUseFault(routes: readonly Route[]): boolean {
  return routes.some((r) => Object.hasOwn(r.typedPerFilterConfig, FAULT_FILTER_NAME));
}

function translateRoute(view: ServiceView, { route, match }: FlatRoute, port: number): Route | undefined {
  const name = match?.name !== undefined ? `${route.name ?? ""}.${match.name}` : (route.name ?? "");
  const a = route.action;
  let action: RouteAction;
  let fault: FaultPolicy | undefined = route.fault;
  if (a.kind === "route") {
    if (a.destinations.length === 0) return undefined;
    action = routeAction(view, a.destinations, port, route.timeoutMs, route.retries);
  } else if (a.kind === "redirect" || a.kind === "directResponse") {
    // grpc-js-xds NACKs the whole RouteConfiguration for a redirect or direct_response action. A
    // gRPC client behind Envoy gets that HTTP status without a gRPC body and fails the call with the
    // status it maps to; an abort of every call with the same HTTP status does exactly that.
    const status = a.kind === "redirect" ? 301 : a.status;
    fault = { ...fault, abort: { perMillion: 1_000_000, httpStatus: status } };
    action = routeAction(view, [{ host: view.hostname, weight: 100 }], port, route.timeoutMs, undefined);
  } else {
    return undefined; // delegate: never routed (istiod drops a root's delegate route it cannot resolve)
  }
  return message(RouteSchema, {
    name,
    match: routeMatch(match),
    action: { case: "route", value: action },
    typedPerFilterConfig: fault ? { [FAULT_FILTER_NAME]: faultConfig(fault) } : {},
  });
}

function routeAction(
  view: ServiceView,
  destinations: readonly RouteDestination[],
  port: number,
  timeoutMs: number | undefined,
  retries: RetryPolicy | undefined,
): RouteAction {
  const clusterOf = (d: RouteDestination) => destinationCluster(d, port, portsOf(view, d.host));
  const first = destinations[0] as RouteDestination;
  const timeout = durationOf(timeoutMs ?? 0);
  return message(RouteActionSchema, {
    clusterSpecifier:
      destinations.length === 1
        ? { case: "cluster", value: clusterOf(first) }
        : {
            case: "weightedClusters",
            value: message(WeightedClusterSchema, {
              clusters: destinations.map((d) =>
                message(WeightedCluster_ClusterWeightSchema, { name: clusterOf(d), weight: d.weight }),
              ),
            }),
          },
    // setTimeout for proxyless gRPC: the route timeout (0s = none), also as max_stream_duration,
    // which is what gRPC reads (A31).
    timeout,
    maxStreamDuration: message(RouteAction_MaxStreamDurationSchema, { maxStreamDuration: timeout }),
    ...(retries && { retryPolicy: retryPolicy(retries) }),
    hashPolicy: hashPolicies(view, destinations),
  });
}

function portsOf(view: ServiceView, host: string): readonly number[] | undefined {
  if (host === view.hostname) return mergedPorts(view).map((p) => p.port);
  return view.destinationPorts?.[host];
}

/**
 * retry.ConvertPolicy: num_retries, retry_on (Envoy conditions, then the gRPC status conditions,
 * then `retriable-status-codes`, which gives istiod's default string), retriable status codes and
 * per-try timeout. The previous-hosts retry predicate istiod adds is left out (gRPC ignores it).
 */
function retryPolicy(r: RetryPolicy) {
  const rsc = "retriable-status-codes";
  const others = r.otherRetryOn.filter((c) => c !== rsc);
  const on = [...others, ...r.grpcRetryOn, ...(r.otherRetryOn.includes(rsc) ? [rsc] : [])];
  return message(RetryPolicySchema, {
    retryOn: on.join(","),
    numRetries: r.attempts,
    retriableStatusCodes: [...r.retriableStatusCodes],
    ...(r.perTryTimeoutMs !== undefined && { perTryTimeout: durationOf(r.perTryTimeoutMs) }),
  });
}

/**
 * hashForHTTPDestination + consistentHashToHashPolicy: a header hash policy per destination of
 * this host whose effective consistent hash names a header (one per header name). Destinations of
 * other hosts get none: their DestinationRule is not in this view.
 */
function hashPolicies(view: ServiceView, destinations: readonly RouteDestination[]) {
  const headers: string[] = [];
  for (const d of destinations) {
    if (d.host !== view.hostname || !view.destinationRule) continue;
    const header = routeConsistentHash(view.destinationRule, d.port, d.subset)?.httpHeaderName;
    if (header && !headers.includes(header)) headers.push(header);
  }
  return headers.map(headerHashPolicy);
}

/**
 * The hash policy of the route to the default cluster (istiod's hashForService, put on the default
 * route of a host without a VirtualService): the header of the rule's consistent hash for the port.
 */
export function defaultRouteHashPolicy(view: ServiceView, port: number): RouteAction_HashPolicy[] {
  const lb = effectivePolicy(view.destinationRule, port)?.loadBalancer;
  const header = lb && "consistentHash" in lb ? lb.consistentHash.httpHeaderName : undefined;
  return header ? [headerHashPolicy(header)] : [];
}

function headerHashPolicy(headerName: string): RouteAction_HashPolicy {
  return message(RouteAction_HashPolicySchema, {
    policySpecifier: { case: "header", value: message(RouteAction_HashPolicy_HeaderSchema, { headerName }) },
  });
}
