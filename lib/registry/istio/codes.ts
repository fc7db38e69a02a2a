/**
 * The status and retry vocabularies istiod validates VirtualServices against: gRPC status names
 * (pkg/util/grpc SupportedGRPCStatus), the HTTP status codes Go's http.StatusText knows, and the
 * retryOn policies Envoy accepts (supportedRetryOnPolicies).
 */

/** gRPC status names and their codes, as a VirtualService fault abort names them. */
export const grpcStatusCodes: Readonly<Record<string, number>> = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
};

/** The retryOn values that are gRPC status conditions (x-envoy-retry-grpc-on); gRPC's xDS client honours only these. */
export const grpcRetryOn = [
  "cancelled",
  "deadline-exceeded",
  "internal",
  "resource-exhausted",
  "unavailable",
] as const;
/** A retryOn value that is a gRPC status condition. */
export type GrpcRetryOn = (typeof grpcRetryOn)[number];

/** Every retryOn policy istiod accepts besides HTTP status codes. */
export const retryOnPolicies: ReadonlySet<string> = new Set<string>([
  "5xx",
  "gateway-error",
  "reset",
  "reset-before-request",
  "connect-failure",
  "retriable-4xx",
  "refused-stream",
  "retriable-status-codes",
  "retriable-headers",
  "envoy-ratelimited",
  "http3-post-connect-failure",
  ...grpcRetryOn,
]);

const httpStatusCodes = new Set<number>([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307,
  308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421,
  422, 423, 424, 425, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

/**
 * The HTTP status a retryOn entry names, as istiod reads it (strconv.Atoi, then a status Go's
 * http.StatusText knows), or undefined when the entry is not such a code.
 */
export function retryOnStatusCode(policy: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(policy)) return undefined;
  const n = Number(policy);
  return httpStatusCodes.has(n) ? n : undefined;
}
