/**
 * A VirtualService's routes for an Envoy sidecar: the proxyless mapping (../route-vs.ts: matches,
 * weights, retries, timeouts, fault) with what istiod does beyond it for a sidecar
 * (pilot/pkg/networking/core/route/route.go translateRoute, setTimeout, getRouteOperation,
 * TranslateRequestMirrorPolicy, translateHeadersOperations; route/retry/retry.go ConvertPolicy):
 * the timeout also as max_grpc_timeout instead of max_stream_duration, the retry policy's host
 * selection (5 attempts, the previous-hosts predicate unless the route hashes), the tracing
 * decorator, rewrite (prefix and authority), request mirrors and header operations.
 */
import { base64Decode } from "@bufbuild/protobuf/wire";
import {
  DataSourceSchema,
  HeaderValueOption_HeaderAppendAction,
  HeaderValueOptionSchema,
  HeaderValueSchema,
  MetadataSchema,
  RuntimeFractionalPercentSchema,
} from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  DecoratorSchema,
  DirectResponseActionSchema,
  RedirectAction_RedirectResponseCode,
  RedirectActionSchema,
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
import type {
  DirectResponseBody,
  HeaderOperations,
  HttpRoute,
  MirrorPolicy,
  Redirect,
} from "../../../registry/istio/virtual-service.ts";
import { destinationCluster } from "../../../registry/istio/vs-routes.ts";
import type { ServiceView } from "../../types.ts";
import { translatedRoutes } from "../route-vs.ts";
import { compareStrings, mergedPorts, message } from "../shared.ts";
import { previousHostsPredicate } from "./route-default.ts";
import { routeHashPolicies } from "./route-hash.ts";

/**
 * The view's VirtualService routes for `port` as a sidecar gets them; empty without any. Each
 * carries the VirtualService as `istio` metadata (util.BuildConfigInfoMetadata). A redirect or
 * direct response is Envoy's own action (ApplyRedirect, ApplyDirectResponse), not the abort
 * proxyless gRPC gets; a redirect code Envoy has no RedirectAction code for drops the route
 * (istiod would send it without an action, which Envoy rejects).
 */
export function sidecarVirtualServiceRoutes(view: ServiceView, port: number): Route[] {
  const vs = view.virtualService;
  const vsName = vs?.name ?? "";
  const metadata = vs && configMetadata(vs);
  const out: Route[] = [];
  for (const { flat, route: r } of translatedRoutes(view, port)) {
    const src = flat.route;
    const { authority, ...headers } = headerFields(src.headers);
    const a = src.action;
    if (a.kind === "redirect" || a.kind === "directResponse") {
      const action = a.kind === "redirect" ? redirectAction(a, port) : directResponseAction(a);
      if (!action) continue;
      out.push(
        message(RouteSchema, {
          name: r.name,
          match: r.match,
          ...headers,
          action,
          decorator: message(DecoratorSchema, { operation: `${vsName}:${port}${pathOf(r)}` }),
          ...(metadata && { metadata }),
        }),
      );
      continue;
    }
    if (r.action.case !== "route") {
      out.push(message(RouteSchema, { ...r, ...headers, ...(metadata && { metadata }) }));
      continue;
    }
    const action = sidecarAction(r.action.value, src, view, port, authority);
    out.push(
      message(RouteSchema, {
        ...r,
        ...headers,
        action: { case: "route", value: action },
        decorator: message(DecoratorSchema, { operation: routeOperation(r, action, vsName, port) }),
        ...(metadata && { metadata }),
      }),
    );
  }
  return out;
}

/** util.BuildConfigInfoMetadata: `istio.config` naming the VirtualService, as istioctl shows it. */
function configMetadata(vs: { name: string; namespace: string }) {
  return message(MetadataSchema, {
    filterMetadata: {
      istio: {
        config: `/apis/networking.istio.io/v1alpha3/namespaces/${vs.namespace}/virtual-service/${vs.name}`,
      },
    },
  });
}

/** ApplyRedirect's response codes; any other 3xx has no RedirectAction code. */
const REDIRECT_CODES: Readonly<Record<number, RedirectAction_RedirectResponseCode>> = {
  301: RedirectAction_RedirectResponseCode.MOVED_PERMANENTLY,
  302: RedirectAction_RedirectResponseCode.FOUND,
  303: RedirectAction_RedirectResponseCode.SEE_OTHER,
  307: RedirectAction_RedirectResponseCode.TEMPORARY_REDIRECT,
  308: RedirectAction_RedirectResponseCode.PERMANENT_REDIRECT,
};

/**
 * ApplyRedirect (mesh semantics): host_redirect = authority, path_redirect = uri, the scheme, the
 * port (derivePort FROM_REQUEST_PORT ▶ the listener port, which is the request's), the code (301
 * by default).
 */
function redirectAction(r: Redirect, port: number): Route["action"] | undefined {
  const code = REDIRECT_CODES[r.redirectCode ?? 301];
  if (code === undefined) return undefined;
  const portRedirect = r.port ?? (r.derivePort === "FROM_REQUEST_PORT" ? port : undefined);
  return {
    case: "redirect",
    value: message(RedirectActionSchema, {
      hostRedirect: r.authority ?? "",
      pathRewriteSpecifier: { case: "pathRedirect", value: r.uri ?? "" },
      ...(r.scheme && { schemeRewriteSpecifier: { case: "schemeRedirect", value: r.scheme } }),
      ...(portRedirect !== undefined && { portRedirect }),
      responseCode: code,
    }),
  };
}

/** ApplyDirectResponse: the status, and the body inline (string or bytes) when given. */
function directResponseAction(d: { status: number; body?: DirectResponseBody }): Route["action"] {
  const b = d.body;
  const body =
    b === undefined
      ? undefined
      : message(DataSourceSchema, {
          specifier:
            "string" in b
              ? { case: "inlineString", value: b.string }
              : { case: "inlineBytes", value: base64Decode(b.bytes) },
        });
  return {
    case: "directResponse",
    value: message(DirectResponseActionSchema, { status: d.status, ...(body && { body }) }),
  };
}

function sidecarAction(
  a: RouteAction,
  src: HttpRoute,
  view: ServiceView,
  port: number,
  headerAuthority: string | undefined,
): RouteAction {
  const timeout = a.timeout;
  const retry = a.retryPolicy;
  const rw = src.rewrite;
  // The rewrite's authority wins over one set through the request headers.
  const authority = rw?.authority ?? headerAuthority;
  // Every consistent-hash key, not only the headers proxyless gRPC takes; a dangling destination
  // (its share answered by a fault on the default cluster) hashes nothing.
  const dests = src.action.kind === "route" ? src.action.destinations : [];
  const clusters = new Set(
    a.clusterSpecifier.case === "cluster"
      ? [a.clusterSpecifier.value]
      : a.clusterSpecifier.case === "weightedClusters"
        ? a.clusterSpecifier.value.clusters.map((c) => c.name)
        : [],
  );
  const ports = mergedPorts(view).map((p) => p.port);
  const live = dests.filter((d) => clusters.has(destinationCluster(d, port, ports)));
  const hashPolicy = routeHashPolicies(view, live);
  // applyHTTPRouteDestination: only a single-destination route that hashes keeps retries on the
  // hashed host (DefaultConsistentHashPolicy, no previous-hosts predicate).
  const hashing = dests.length === 1 && hashPolicy.length > 0;
  return message(RouteActionSchema, {
    ...a,
    hashPolicy,
    maxStreamDuration: undefined,
    ...(timeout && { maxGrpcTimeout: timeout }),
    ...(retry && {
      retryPolicy: message(RetryPolicySchema, {
        ...retry,
        hostSelectionRetryMaxAttempts: 5n,
        ...(!hashing && { retryHostPredicate: [previousHostsPredicate] }),
      }),
    }),
    ...(rw?.uri !== undefined && rw.uri !== "" && { prefixRewrite: rw.uri }),
    ...(authority !== undefined && {
      hostRewriteSpecifier: { case: "hostRewriteLiteral", value: authority },
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
 * TranslateHeadersOperations: request and response headers to add (set ▶ overwrite, then add ▶
 * append, each sorted by name) and to remove, on the route. Headers Envoy will not let a route
 * modify (`:`-prefixed, `host`: it NACKs them) are left out (isInternalHeader, dropInternal); a
 * request `:authority` / `host` set or added becomes the route's authority rewrite instead
 * (isAuthorityHeader; `set` wins over `add`).
 */
function headerFields(h: HttpRoute["headers"]): {
  authority?: string;
  requestHeadersToAdd?: ReturnType<typeof options>;
  requestHeadersToRemove?: string[];
  responseHeadersToAdd?: ReturnType<typeof options>;
  responseHeadersToRemove?: string[];
} {
  if (!h) return {};
  const toAdd = (ops: HeaderOperations | undefined) => [
    ...options(ops?.set, HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD),
    ...options(ops?.add, HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD),
  ];
  const authorityOf = (m: Record<string, string> | undefined) => {
    let found: string | undefined;
    for (const [k, v] of Object.entries(m ?? {})) if (isAuthorityHeader(k)) found = v;
    return found;
  };
  const authority = authorityOf(h.request?.set) ?? authorityOf(h.request?.add);
  const removable = (names: readonly string[] | undefined) =>
    (names ?? []).filter((n) => !isInternalHeader(n));
  return {
    ...(authority !== undefined && { authority }),
    requestHeadersToAdd: toAdd(h.request),
    requestHeadersToRemove: removable(h.request?.remove),
    responseHeadersToAdd: toAdd(h.response),
    responseHeadersToRemove: removable(h.response?.remove),
  };
}

/** isInternalHeader: a value Envoy does not let a route modify. */
function isInternalHeader(name: string): boolean {
  return name.startsWith(":") || name.toLowerCase() === "host";
}

/** isAuthorityHeader. */
function isAuthorityHeader(name: string): boolean {
  const n = name.toLowerCase();
  return n === ":authority" || n === "host";
}

function options(
  headers: Record<string, string> | undefined,
  appendAction: HeaderValueOption_HeaderAppendAction,
) {
  return Object.entries(headers ?? {})
    .filter(([key]) => !isInternalHeader(key))
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
  const path = pathOf(r);
  const c = a.clusterSpecifier;
  if (c.case === "cluster") {
    const parts = c.value.split("|");
    if (parts.length === 4 && parts[0] === "outbound") return `${parts[3]}:${parts[1]}${path}`;
  }
  return `${vsName}:${port}${path}`;
}

/** getRouteOperation's path: the match's exact path, prefix + `*`, or regex; `/*` without one. */
function pathOf(r: Route): string {
  const ps = r.match?.pathSpecifier;
  if (ps?.case === "prefix") return `${ps.value}*`;
  if (ps?.case === "path") return ps.value;
  if (ps?.case === "safeRegex") return ps.value.regex;
  return "/*";
}
