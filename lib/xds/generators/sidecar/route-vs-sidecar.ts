/**
 * A VirtualService's routes for an Envoy sidecar: the proxyless mapping (../route-vs.ts: matches,
 * weights, retries, timeouts, fault) with the three things istiod does differently for a sidecar
 * (pilot/pkg/networking/core/route/route.go setTimeout, getRouteOperation; route/retry/retry.go
 * ConvertPolicy): the timeout also as max_grpc_timeout instead of max_stream_duration, the retry
 * policy's host selection (5 attempts, and the previous-hosts predicate unless the route hashes),
 * and the tracing decorator.
 */
import {
  DecoratorSchema,
  RetryPolicySchema,
  type Route,
  type RouteAction,
  RouteActionSchema,
  RouteSchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import type { ServiceView } from "../../types.ts";
import { virtualServiceRoutes } from "../route-vs.ts";
import { message } from "../shared.ts";
import { previousHostsPredicate } from "./route-default.ts";

/** The view's VirtualService routes for `port` as a sidecar gets them; empty without any. */
export function sidecarVirtualServiceRoutes(view: ServiceView, port: number): Route[] {
  const vsName = view.virtualService?.name ?? "";
  return virtualServiceRoutes(view, port).map((r) => {
    if (r.action.case !== "route") return r;
    const a = r.action.value;
    const action = sidecarAction(a);
    return message(RouteSchema, {
      ...r,
      action: { case: "route", value: action },
      decorator: message(DecoratorSchema, { operation: routeOperation(r, action, vsName, port) }),
    });
  });
}

function sidecarAction(a: RouteAction): RouteAction {
  const timeout = a.timeout;
  const retry = a.retryPolicy;
  return message(RouteActionSchema, {
    ...a,
    maxStreamDuration: undefined,
    ...(timeout && { maxGrpcTimeout: timeout }),
    ...(retry && {
      retryPolicy: message(RetryPolicySchema, {
        ...retry,
        hostSelectionRetryMaxAttempts: 5n,
        ...(a.hashPolicy.length === 0 && { retryHostPredicate: [previousHostsPredicate] }),
      }),
    }),
  });
}

/**
 * getRouteOperation: `<host>:<port><path>` for a route to one cluster (host and port from its
 * `outbound|<port>|<subset>|<host>` name), else `<VirtualService name>:<listener port><path>`;
 * the path is the match's exact path, prefix + `*`, or regex, `/*` without one.
 */
function routeOperation(r: Route, a: RouteAction, vsName: string, port: number): string {
  const ps = r.match?.pathSpecifier;
  let path = "/*";
  if (ps?.case === "prefix") path = `${ps.value}*`;
  else if (ps?.case === "path") path = ps.value;
  else if (ps?.case === "safeRegex") path = ps.value.regex;
  const c = a.clusterSpecifier;
  if (c.case === "cluster") {
    const parts = c.value.split("|");
    if (parts.length === 4 && parts[0] === "outbound") return `${parts[3]}:${parts[1]}${path}`;
  }
  return `${vsName}:${port}${path}`;
}
