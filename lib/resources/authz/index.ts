/** AuthorizationPolicy ▶ RBAC filters for Envoy sidecars (HTTP and TCP chains) and proxyless gRPC servers. */
export { type AuthzTarget, SPIFFE_PREFIX } from "./attributes.ts";
export { buildHttpAuthzFilters, buildNetworkAuthzFilters, type EnvoyAuthzOptions } from "./envoy-filters.ts";
export { buildGrpcAuthzFilters, GRPC_RBAC_DENY_FILTER, type GrpcAuthzOptions } from "./grpc-filters.ts";
export type { TrustDomains } from "./trust-domain.ts";
