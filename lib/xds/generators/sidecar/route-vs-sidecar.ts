/**
 * A VirtualService's routes for an Envoy sidecar: the proxyless mapping (../route-vs.ts: matches,
 * weights, retries, timeouts, fault) with what istiod does beyond it for a sidecar
 * (pilot/pkg/networking/core/route/route.go translateRoute, setTimeout, getRouteOperation,
 * TranslateRequestMirrorPolicy, translateHeadersOperations; route/retry/retry.go ConvertPolicy):
 * the timeout also as max_grpc_timeout instead of max_stream_duration, the retry policy's host
 * selection (5 attempts, the previous-hosts predicate unless the route hashes), the tracing
 * decorator, rewrite (prefix and authority), request mirrors and header operations.
 */
import {
  HeaderValueOption_HeaderAppendAction,
  HeaderValueOptionSchema,
  HeaderValueSchema,
  RuntimeFractionalPercentSchema,
} from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  DecoratorSchema,
  RetryPolicySchema,
  type Route,
  type RouteAction,
  RouteAction_RequestMirrorPolicySchema,
  RouteActionSchema,
  RouteSchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import {
  FractionalPercent_DenominatorType,
  FractionalPercentSchema,
} from "../../../gen/envoy/type/v3/percent_pb.ts";
import {
  destinationCluster,
  type HeaderOperations,
  type HttpRoute,
  type MirrorPolicy,
} from "../../../registry/istio/virtual-service.ts";
import type { ServiceView } from "../../types.ts";
import { translatedRoutes } from "../route-vs.ts";
import { compareStrings, mergedPorts, message } from "../shared.ts";
import { previousHostsPredicate } from "./route-default.ts";

/** The view's VirtualService routes for `port` as a sidecar gets them; empty without any. */
export function sidecarVirtualServiceRoutes(view: ServiceView, port: number): Route[] {
  const vsName = view.virtualService?.name ?? "";
  return translatedRoutes(view, port).map(({ flat, route: r }) => {
    const src = flat.route;
    const headers = headerFields(src.headers);
    if (r.action.case !== "route") return message(RouteSchema, { ...r, ...headers });
    const action = sidecarAction(r.action.value, src, view, port);
    return message(RouteSchema, {
      ...r,
      ...headers,
      action: { case: "route", value: action },
      decorator: message(DecoratorSchema, { operation: routeOperation(r, action, vsName, port) }),
    });
  });
}

function sidecarAction(a: RouteAction, src: HttpRoute, view: ServiceView, port: number): RouteAction {
  const timeout = a.timeout;
  const retry = a.retryPolicy;
  const rw = src.rewrite;
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
    ...(rw?.uri !== undefined && rw.uri !== "" && { prefixRewrite: rw.uri }),
    ...(rw?.authority !== undefined && {
      hostRewriteSpecifier: { case: "hostRewriteLiteral", value: rw.authority },
    }),
    ...(src.mirrors && { requestMirrorPolicies: src.mirrors.map((m) => mirrorPolicy(m, view, port)) }),
  });
}

/**
 * TranslateRequestMirrorPolicy: the mirror's cluster (named as a route destination's), its share
 * (100% when the config gives none, else per million), trace_sampled false.
 */
function mirrorPolicy(m: MirrorPolicy, view: ServiceView, port: number) {
  const ports =
    m.destination.host === view.hostname
      ? mergedPorts(view).map((p) => p.port)
      : view.destinationPorts?.[m.destination.host];
  const defaultValue =
    m.perMillion === undefined
      ? message(FractionalPercentSchema, {
          numerator: 100,
          denominator: FractionalPercent_DenominatorType.HUNDRED,
        })
      : message(FractionalPercentSchema, {
          numerator: Math.max(0, Math.min(m.perMillion, 1_000_000)),
          denominator: FractionalPercent_DenominatorType.MILLION,
        });
  return message(RouteAction_RequestMirrorPolicySchema, {
    cluster: destinationCluster({ ...m.destination, weight: 0 }, port, ports),
    runtimeFraction: message(RuntimeFractionalPercentSchema, { defaultValue }),
    traceSampled: false,
  });
}

/**
 * translateHeadersOperations: request and response headers to add (set ▶ overwrite, then add ▶
 * append, each sorted by name) and to remove, on the route.
 */
function headerFields(h: HttpRoute["headers"]) {
  if (!h) return {};
  const toAdd = (ops: HeaderOperations | undefined) => [
    ...options(ops?.set, HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD),
    ...options(ops?.add, HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD),
  ];
  return {
    requestHeadersToAdd: toAdd(h.request),
    requestHeadersToRemove: [...(h.request?.remove ?? [])],
    responseHeadersToAdd: toAdd(h.response),
    responseHeadersToRemove: [...(h.response?.remove ?? [])],
  };
}

function options(
  headers: Record<string, string> | undefined,
  appendAction: HeaderValueOption_HeaderAppendAction,
) {
  return Object.entries(headers ?? {})
    .sort((a, b) => compareStrings(a[0], b[0]))
    .map(([key, value]) =>
      message(HeaderValueOptionSchema, { header: message(HeaderValueSchema, { key, value }), appendAction }),
    );
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
