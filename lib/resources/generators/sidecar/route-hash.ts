/**
 * The hash policies of an Envoy sidecar's routes, as istiod writes them (pilot/pkg/networking/core/
 * route/route.go consistentHashToHashPolicy, hashForService, hashForHTTPDestination): every key a
 * DestinationRule's consistentHash can name — a header, a cookie (generated with its ttl), the
 * source IP, a query parameter. Proxyless gRPC takes headers only (../route-vs.ts); a sidecar
 * whose ring-hash cluster got no hash policy would spread requests at random.
 */
import {
  type RouteAction_HashPolicy,
  RouteAction_HashPolicy_ConnectionPropertiesSchema,
  RouteAction_HashPolicy_CookieSchema,
  RouteAction_HashPolicy_HeaderSchema,
  RouteAction_HashPolicy_QueryParameterSchema,
  RouteAction_HashPolicySchema,
} from "../../../gen/envoy/config/route/v3/route_components_pb.ts";
import { effectivePolicy, routeConsistentHash } from "../../../registry/istio/destination-rule.ts";
import type { ConsistentHash } from "../../../registry/istio/traffic-policy.ts";
import type { RouteDestination } from "../../../registry/istio/virtual-service.ts";
import type { ServiceView } from "../../types.ts";
import { durationOf } from "../cluster-policy.ts";
import { message } from "../shared.ts";

/** consistentHashToHashPolicy: the one hash key the consistent hash names, or none. */
export function hashPolicyOf(ch: ConsistentHash | undefined): RouteAction_HashPolicy | undefined {
  if (!ch) return undefined;
  const policy = (policySpecifier: RouteAction_HashPolicy["policySpecifier"]) =>
    message(RouteAction_HashPolicySchema, { policySpecifier });
  if (ch.httpHeaderName !== undefined)
    return policy({
      case: "header",
      value: message(RouteAction_HashPolicy_HeaderSchema, { headerName: ch.httpHeaderName }),
    });
  if (ch.httpCookie) {
    const c = ch.httpCookie;
    return policy({
      case: "cookie",
      value: message(RouteAction_HashPolicy_CookieSchema, {
        name: c.name,
        path: c.path ?? "",
        ...(c.ttlMs !== undefined && { ttl: durationOf(c.ttlMs) }),
      }),
    });
  }
  if (ch.useSourceIp)
    return policy({
      case: "connectionProperties",
      value: message(RouteAction_HashPolicy_ConnectionPropertiesSchema, { sourceIp: true }),
    });
  if (ch.httpQueryParameterName !== undefined)
    return policy({
      case: "queryParameter",
      value: message(RouteAction_HashPolicy_QueryParameterSchema, { name: ch.httpQueryParameterName }),
    });
  return undefined;
}

/** hashForService: the hash policy of the default route, from the rule's consistent hash for the port. */
export function defaultRouteHashPolicies(view: ServiceView, port: number): RouteAction_HashPolicy[] {
  const lb = effectivePolicy(view.destinationRule, port)?.loadBalancer;
  const p = hashPolicyOf(lb && "consistentHash" in lb ? lb.consistentHash : undefined);
  return p ? [p] : [];
}

/**
 * hashForHTTPDestination per destination of this host (subset and port-level hashes first), one
 * policy per destination that hashes, equal ones once. Destinations of other hosts get none: their
 * DestinationRule is not in this view.
 */
export function routeHashPolicies(
  view: ServiceView,
  destinations: readonly RouteDestination[],
): RouteAction_HashPolicy[] {
  const out: RouteAction_HashPolicy[] = [];
  const seen = new Set<string>();
  for (const d of destinations) {
    if (d.host !== view.hostname || !view.destinationRule) continue;
    const ch = routeConsistentHash(view.destinationRule, d.port, d.subset);
    const p = hashPolicyOf(ch);
    const key = JSON.stringify(ch);
    if (p && !seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}
