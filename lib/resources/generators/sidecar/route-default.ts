/**
 * The routes istiod gives a sidecar without a VirtualService, and the catch-all virtual host
 * (pilot/pkg/networking/core/route/route.go BuildDefaultHTTPOutboundRoute,
 * BuildDefaultHTTPInboundRoute; route/retry/retry.go DefaultPolicy; httproute.go
 * buildCatchAllVirtualHost, buildSidecarInboundHTTPRouteConfig).
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  DecoratorSchema,
  DirectResponseActionSchema,
  RetryPolicy_RetryHostPredicateSchema,
  RetryPolicySchema,
  type Route,
  type RouteAction,
  type RouteAction_HashPolicy,
  RouteActionSchema,
  RouteMatchSchema,
  RouteSchema,
  type VirtualHost,
  VirtualHostSchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import { PreviousHostsPredicateSchema } from "../../../gen/envoy/extensions/retry/host/previous_hosts/v3/previous_hosts_pb.ts";
import { durationOf } from "../cluster-policy.ts";
import { deepFreeze, message } from "../shared.ts";
import { PASSTHROUGH_CLUSTER } from "./cluster.ts";
import type { OutboundTrafficMode } from "./types.ts";

/** route.DefaultRouteName: the name of the route a service gets without a VirtualService. */
export const DEFAULT_ROUTE_NAME = "default";
/** util.Passthrough: the catch-all virtual host (and its route) under ALLOW_ANY. */
export const ALLOW_ANY_VHOST = "allow_any";
/** util.BlackHole: the catch-all virtual host (and its route) under REGISTRY_ONLY. */
export const BLOCK_ALL_VHOST = "block_all";

const zero = deepFreeze(durationOf(0));
const prefixAll = deepFreeze(message(RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }));

/** xdsfilters.RetryPreviousHosts: retries prefer hosts not tried yet. */
export const previousHostsPredicate = deepFreeze(
  message(RetryPolicy_RetryHostPredicateSchema, {
    name: "envoy.retry_host_predicates.previous_hosts",
    configType: {
      case: "typedConfig",
      value: anyPack(PreviousHostsPredicateSchema, create(PreviousHostsPredicateSchema)),
    },
  }),
);

/**
 * retry.DefaultPolicy: 2 retries on connect-failure, refused-stream, unavailable, cancelled and 503,
 * 5 host selection attempts, the previous-hosts predicate; DefaultConsistentHashPolicy (no predicate)
 * when the route hashes, so a retry stays on the hashed host.
 */
function defaultRetryPolicy(hashing: boolean) {
  return message(RetryPolicySchema, {
    retryOn: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
    numRetries: 2,
    retriableStatusCodes: [503],
    hostSelectionRetryMaxAttempts: 5n,
    ...(!hashing && { retryHostPredicate: [previousHostsPredicate] }),
  });
}

/**
 * BuildDefaultHTTPOutboundRoute: `default`, prefix `/`, to `cluster` with no timeout (timeout and
 * max_grpc_timeout 0s), the default retry policy, the decorator `<host>:<port>/*`
 * (telemetry.TraceOperation), and the DestinationRule's hash policy when it has one.
 */
export function defaultOutboundRoute(
  cluster: string,
  operation: string,
  hashPolicy: readonly RouteAction_HashPolicy[],
): Route {
  return defaultRoute(cluster, operation, {
    retryPolicy: defaultRetryPolicy(hashPolicy.length > 0),
    ...(hashPolicy.length > 0 && { hashPolicy: [...hashPolicy] }),
  });
}

/**
 * BuildDefaultHTTPInboundRoute: prefix `/` to the inbound cluster, no timeout, no retries; the
 * decorator `<host>:<port>/*` of the instance's service.
 */
export function defaultInboundRoute(cluster: string, operation: string): Route {
  return defaultRoute(cluster, operation, {});
}

/** The `default` route both build: prefix `/` to `cluster`, no timeout, the decorator, plus `action`. */
function defaultRoute(
  cluster: string,
  operation: string,
  action: Partial<Pick<RouteAction, "retryPolicy" | "hashPolicy">>,
): Route {
  return message(RouteSchema, {
    name: DEFAULT_ROUTE_NAME,
    match: prefixAll,
    decorator: message(DecoratorSchema, { operation }),
    action: {
      case: "route",
      value: message(RouteActionSchema, {
        clusterSpecifier: { case: "cluster", value: cluster },
        timeout: zero,
        maxGrpcTimeout: zero,
        ...action,
      }),
    },
  });
}

/**
 * buildCatchAllVirtualHost, last in every RouteConfiguration `<port>`: ALLOW_ANY ▶ `allow_any`,
 * domains `*`, route `allow_any` to PassthroughCluster without timeout; REGISTRY_ONLY ▶
 * `block_all`, route `block_all` answering 502 directly.
 */
export function catchAllVirtualHost(mode: OutboundTrafficMode): VirtualHost {
  return mode === "ALLOW_ANY" ? allowAny : blockAll;
}

const allowAny = deepFreeze(
  message(VirtualHostSchema, {
    name: ALLOW_ANY_VHOST,
    domains: ["*"],
    includeRequestAttemptCount: true,
    routes: [
      message(RouteSchema, {
        name: ALLOW_ANY_VHOST,
        match: prefixAll,
        action: {
          case: "route",
          value: message(RouteActionSchema, {
            clusterSpecifier: { case: "cluster", value: PASSTHROUGH_CLUSTER },
            timeout: zero,
            maxGrpcTimeout: zero,
          }),
        },
      }),
    ],
  }),
);

const blockAll = deepFreeze(
  message(VirtualHostSchema, {
    name: BLOCK_ALL_VHOST,
    domains: ["*"],
    includeRequestAttemptCount: true,
    routes: [
      message(RouteSchema, {
        name: BLOCK_ALL_VHOST,
        match: prefixAll,
        action: { case: "directResponse", value: message(DirectResponseActionSchema, { status: 502 }) },
      }),
    ],
  }),
);
