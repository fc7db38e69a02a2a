/**
 * Fault injection for proxyless gRPC (A33): the HTTPFault filter's name, its empty top-level config
 * for the listener, and a route's per-filter override as istiod's TranslateFault builds it.
 */
import { create } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { FaultDelaySchema } from "../../gen/envoy/extensions/filters/common/fault/v3/fault_pb.ts";
import {
  FaultAbortSchema,
  HTTPFaultSchema,
} from "../../gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import {
  FractionalPercent_DenominatorType,
  FractionalPercentSchema,
} from "../../gen/envoy/type/v3/percent_pb.ts";
import type { FaultPolicy } from "../../registry/istio/virtual-service.ts";
import { durationOf } from "./cluster-policy.ts";
import { deepFreeze, message } from "./shared.ts";

/** The fault filter's name (Envoy's well-known name), also the key of a route's override. */
export const FAULT_FILTER_NAME = "envoy.filters.http.fault";

/** The listener's fault filter config: empty, so only routes that override it inject anything. */
export const emptyFaultConfig: Any = deepFreeze(anyPack(HTTPFaultSchema, create(HTTPFaultSchema)));

/**
 * TranslateFault: a fixed delay and/or an abort with a gRPC or HTTP status, each with its
 * percentage per million (0 when the config gave none: Envoy injects nothing then, and grpc-js-xds
 * rejects a fault whose percentage is unset).
 */
export function faultConfig(f: FaultPolicy): Any {
  const fault = message(HTTPFaultSchema, {
    ...(f.delay && {
      delay: message(FaultDelaySchema, {
        faultDelaySecifier: { case: "fixedDelay", value: durationOf(f.delay.fixedDelayMs) },
        percentage: perMillion(f.delay.perMillion),
      }),
    }),
    ...(f.abort && {
      abort: message(FaultAbortSchema, {
        errorType:
          f.abort.grpcStatus !== undefined
            ? { case: "grpcStatus", value: f.abort.grpcStatus }
            : { case: "httpStatus", value: f.abort.httpStatus ?? 503 },
        percentage: perMillion(f.abort.perMillion),
      }),
    }),
  });
  return anyPack(HTTPFaultSchema, fault);
}

function perMillion(n: number) {
  return message(FractionalPercentSchema, {
    numerator: Math.max(0, Math.min(Math.trunc(n), 1_000_000)),
    denominator: FractionalPercent_DenominatorType.MILLION,
  });
}
