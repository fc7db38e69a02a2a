/**
 * A VirtualService's HTTP routes for one listener port as Envoy routes, as istiod's translateRoute
 * builds them for a proxyless gRPC client (BuildHTTPRoutesForVirtualService, applyHTTPRouteDestination,
 * setTimeout, retry.ConvertPolicy, TranslateFault, consistentHashToHashPolicy), limited to what a
 * RouteConfiguration shared by every client can say and what grpc-js-xds accepts.
 */

import type { Any } from "@bufbuild/protobuf/wkt";
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
import { grpcStatusCodes } from "../../registry/istio/codes.ts";
import { effectivePolicy, routeConsistentHash } from "../../registry/istio/destination-rule.ts";
import { type DestinationHost, danglingReason } from "../../registry/istio/route-destinations.ts";
import type { FaultPolicy, RetryPolicy, RouteDestination } from "../../registry/istio/virtual-service.ts";
import { destinationCluster, type FlatRoute, routesForPort } from "../../registry/istio/vs-routes.ts";
import type { ServiceView } from "../types.ts";
import { durationOf } from "./cluster-policy.ts";
import { FAULT_FILTER_NAME, faultConfig } from "./route-fault.ts";
import { expressible, routeMatch } from "./route-match.ts";
import { clusterName, listenerName, mergedPorts, message } from "./shared.ts";

/** The Envoy routes of the view's VirtualService for `port`, in order; empty without one. */
export function virtualServiceRoutes(view: ServiceView, port: number): Route[] {
  return translatedRoutes(view, port).map((t) => t.route);
}

/**
 * virtualServiceRoutes with the VirtualService route and match each Envoy route came from, so a
 * generator that maps more of a route (an Envoy sidecar: rewrite, mirrors, headers) finds its source.
 */
export function translatedRoutes(view: ServiceView, port: number): { flat: FlatRoute; route: Route }[] {
  const vs = view.virtualService;
  if (!vs) return [];
  const out: { flat: FlatRoute; route: Route }[] = [];
  for (const flat of routesForPort(vs, port)) {
    if (flat.match && !expressible(flat.match)) continue;
    const route = translateRoute(view, flat, port);
    if (route) out.push({ flat, route });
  }
  return out;
}

/**
 * Whether the port's routes use the fault filter (the listener then runs it before the router): a
 * route's override, or a weighted cluster's (a dangling share of a split).
 */
export function routesUseFault(routes: readonly Route[]): boolean {
  return routes.some(
    (r) =>
      Object.hasOwn(r.typedPerFilterConfig, FAULT_FILTER_NAME) ||
      (r.action.case === "route" &&
        r.action.value.clusterSpecifier.case === "weightedClusters" &&
        r.action.value.clusterSpecifier.value.clusters.some((c) =>
          Object.hasOwn(c.typedPerFilterConfig, FAULT_FILTER_NAME),
        )),
  );
}

/** A route destination that names a cluster nobody publishes, as the flush logs it. */
export interface DanglingDestination {
  /** The RouteConfiguration (`<host>:<port>`). */
  route: string;
  /** The cluster the destination names (`outbound|<port>|<subset>|<host>`). */
  cluster: string;
  /** Why it does not exist (route-destinations.ts danglingReason). */
  reason: string;
}

/**
 * Every destination of the view's VirtualService that names a cluster nobody publishes, once per
 * RouteConfiguration and cluster, in route order: exactly those the routes answer UNAVAILABLE.
 */
export function danglingDestinations(view: ServiceView): DanglingDestination[] {
  const vs = view.virtualService;
  if (!vs) return [];
  const out: DanglingDestination[] = [];
  for (const { port } of mergedPorts(view)) {
    const route = listenerName(view.hostname, port);
    for (const flat of routesForPort(vs, port)) {
      if ((flat.match && !expressible(flat.match)) || flat.route.action.kind !== "route") continue;
      for (const t of targets(view, flat.route.action.destinations, port)) {
        if (t.dangling === undefined) continue;
        if (!out.some((o) => o.route === route && o.cluster === t.cluster))
          out.push({ route, cluster: t.cluster, reason: t.dangling });
      }
    }
  }
  return out;
}

/**
 * HTTP statuses Envoy takes in a fault abort and a direct response: [200, 600). istiod accepts 600
 * too (validateHTTPStatus) and sends it, and Envoy then refuses the whole RouteConfiguration; such
 * a route is left out instead, as a redirect code Envoy has no name for is.
 */
function envoyStatus(status: number | undefined): boolean {
  return status === undefined || (status >= 200 && status < 600);
}

function translateRoute(view: ServiceView, { route, match }: FlatRoute, port: number): Route | undefined {
  const name = match?.name !== undefined ? `${route.name ?? ""}.${match.name}` : (route.name ?? "");
  const a = route.action;
  if (!envoyStatus(route.fault?.abort?.httpStatus) || (a.kind === "directResponse" && !envoyStatus(a.status)))
    return undefined;
  let action: RouteAction;
  let fault: FaultPolicy | undefined = route.fault;
  if (a.kind === "route") {
    if (a.destinations.length === 0) return undefined;
    const ts = targets(view, a.destinations, port);
    const live = ts.filter((t) => t.dangling === undefined);
    const lost = ts.length - live.length;
    if (live.length === 0) {
      // Every destination dangles: the whole route fails at once with UNAVAILABLE (Envoy: 503 NC).
      fault = danglingFault(route.fault);
      action = routeAction(view, [ownDefault(view, port, 100)], [], route.timeoutMs, route.retries);
    } else {
      // A share that dangles fails at once (its own fault override on the service's default
      // cluster, which always exists); the rest is routed as configured.
      const entries: Entry[] = live.map((t) => ({ cluster: t.cluster, weight: t.d.weight }));
      if (lost > 0) {
        const weight = ts.reduce((sum, t) => sum + (t.dangling === undefined ? 0 : t.d.weight), 0);
        entries.push({ ...ownDefault(view, port, weight), fault: faultConfig(danglingFault(route.fault)) });
      }
      const dests = live.map((t) => t.d);
      action = routeAction(view, entries, dests, route.timeoutMs, route.retries);
    }
  } else if (a.kind === "redirect" || a.kind === "directResponse") {
    // grpc-js-xds NACKs the whole RouteConfiguration for a redirect or direct_response action. A
    // gRPC client behind Envoy gets that HTTP status without a gRPC body and fails the call with the
    // status it maps to; an abort of every call with the same HTTP status does exactly that.
    const status = a.kind === "redirect" ? 301 : a.status;
    fault = { ...fault, abort: { perMillion: 1_000_000, httpStatus: status } };
    const own = [{ host: view.hostname, weight: 100 }];
    action = routeAction(view, [ownDefault(view, port, 100)], own, route.timeoutMs, undefined);
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

/** One destination as published: its cluster, and why that cluster does not exist (if it does not). */
interface Target {
  d: RouteDestination;
  cluster: string;
  dangling?: string;
}

function targets(view: ServiceView, destinations: readonly RouteDestination[], port: number): Target[] {
  return destinations.map((d) => {
    const host = hostOf(view, d.host);
    const cluster = destinationCluster(d, port, host?.ports ?? portsOf(view, d.host));
    const dangling = danglingReason(d, port, host);
    return dangling === undefined ? { d, cluster } : { d, cluster, dangling };
  });
}

/** What `host` publishes: the view's own ports and subsets, or what the flush found of another host. */
function hostOf(view: ServiceView, host: string): DestinationHost | undefined {
  if (host !== view.hostname) return view.destinationHosts?.[host];
  return {
    ports: mergedPorts(view).map((p) => p.port),
    subsets: view.destinationRule?.subsets.map((s) => s.name) ?? [],
  };
}

/**
 * The fault of a dangling destination: every call aborted with UNAVAILABLE, as gRPC fails a call
 * Envoy answered 503 NC; the route's delay, if any, still comes first.
 */
function danglingFault(f: FaultPolicy | undefined): FaultPolicy {
  const grpcStatus = grpcStatusCodes.UNAVAILABLE as number;
  return { ...(f?.delay && { delay: f.delay }), abort: { perMillion: 1_000_000, grpcStatus } };
}

/** A weighted cluster of a route: its name, weight, and a fault override of its own. */
interface Entry {
  cluster: string;
  weight: number;
  fault?: Any;
}

/** The service's own default cluster for the port: always published with its RouteConfiguration. */
function ownDefault(view: ServiceView, port: number, weight: number): Entry {
  return { cluster: clusterName(view.hostname, port), weight };
}

function routeAction(
  view: ServiceView,
  entries: readonly Entry[],
  hashed: readonly RouteDestination[],
  timeoutMs: number | undefined,
  retries: RetryPolicy | undefined,
): RouteAction {
  const first = entries[0] as Entry;
  const timeout = durationOf(timeoutMs ?? 0);
  return message(RouteActionSchema, {
    clusterSpecifier:
      entries.length === 1 && !first.fault
        ? { case: "cluster", value: first.cluster }
        : {
            case: "weightedClusters",
            value: message(WeightedClusterSchema, {
              clusters: entries.map((e) =>
                message(WeightedCluster_ClusterWeightSchema, {
                  name: e.cluster,
                  weight: e.weight,
                  ...(e.fault && { typedPerFilterConfig: { [FAULT_FILTER_NAME]: e.fault } }),
                }),
              ),
            }),
          },
    // setTimeout for proxyless gRPC: the route timeout (0s = none), also as max_stream_duration,
    // which is what gRPC reads (A31).
    timeout,
    maxStreamDuration: message(RouteAction_MaxStreamDurationSchema, { maxStreamDuration: timeout }),
    ...(retries && { retryPolicy: retryPolicy(retries) }),
    hashPolicy: hashPolicies(view, hashed),
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
