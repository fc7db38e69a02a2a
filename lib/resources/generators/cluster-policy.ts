/**
 * A DestinationRule's effective traffic policy as Cluster fields, as istiod's cluster builder
 * applies it (ApplyRingHashLoadBalancer, applyConnectionPool, applyOutlierDetection), limited to
 * what proxyless gRPC can take: grpc-js-xds NACKs a Cluster whose lb_policy is not ROUND_ROBIN or
 * RING_HASH, so the other simple policies stay ROUND_ROBIN (as Istio's grpcgen, which warns and
 * leaves the default).
 */
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  CircuitBreakers_ThresholdsSchema,
  CircuitBreakersSchema,
} from "../../gen/envoy/config/cluster/v3/circuit_breaker_pb.ts";
import {
  type Cluster,
  Cluster_CommonLbConfigSchema,
  Cluster_LbPolicy,
  Cluster_RingHashLbConfigSchema,
} from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { OutlierDetectionSchema } from "../../gen/envoy/config/cluster/v3/outlier_detection_pb.ts";
import { RoutingPriority } from "../../gen/envoy/config/core/v3/base_pb.ts";
import { PercentSchema } from "../../gen/envoy/type/v3/percent_pb.ts";
import type {
  ConnectionPool,
  EffectivePolicy,
  OutlierDetection,
} from "../../registry/istio/traffic-policy.ts";
import { message } from "./shared.ts";

const UINT32_MAX = 0xffffffff;
/** Envoy's (PGV) and gRPC's upper bound for ring_hash_lb_config.minimum_ring_size. */
export const MAX_RING_SIZE = 8_388_608;

/** The Cluster fields a policy sets; empty for no policy, so a cluster without a rule is unchanged. */
export function policyFields(policy: EffectivePolicy | undefined): Partial<Cluster> {
  if (!policy) return {};
  const out: Partial<Cluster> = {};
  const lb = policy.loadBalancer;
  if (lb && "consistentHash" in lb) {
    // RING_HASH; maglev too (istiod sets MAGLEV, which gRPC rejects: the ring keeps the hashing).
    out.lbPolicy = Cluster_LbPolicy.RING_HASH;
    const size = lb.consistentHash.minimumRingSize;
    if (lb.consistentHash.algorithm === "ringHash" && size !== undefined && size > 0) {
      out.lbConfig = {
        case: "ringHashLbConfig",
        value: message(Cluster_RingHashLbConfigSchema, {
          minimumRingSize: BigInt(Math.min(size, MAX_RING_SIZE)),
        }),
      };
    }
  }
  if (policy.connectionPool) out.circuitBreakers = circuitBreakers(policy.connectionPool);
  if (policy.outlierDetection) {
    out.outlierDetection = outlierDetection(policy.outlierDetection);
    // istiod sets the panic threshold to minHealthPercent (0 unless set) whenever outlier detection is on.
    out.commonLbConfig = message(Cluster_CommonLbConfigSchema, {
      healthyPanicThreshold: message(PercentSchema, { value: 0 }),
    });
  }
  return out;
}

/** applyConnectionPool: Istio's default thresholds (all unlimited), max_requests from http2MaxRequests. */
function circuitBreakers(pool: ConnectionPool) {
  const max = pool.http2MaxRequests;
  return message(CircuitBreakersSchema, {
    thresholds: [
      message(CircuitBreakers_ThresholdsSchema, {
        priority: RoutingPriority.DEFAULT,
        maxConnections: UINT32_MAX,
        maxPendingRequests: UINT32_MAX,
        maxRequests: max !== undefined && max > 0 ? Math.min(max, UINT32_MAX) : UINT32_MAX,
        maxRetries: UINT32_MAX,
        trackRemaining: true,
      }),
    ],
  });
}

/** applyOutlierDetection: success-rate ejection off, consecutive errors enforced at 100% when > 0. */
function outlierDetection(od: OutlierDetection) {
  const enforce = (v: number) => (v > 0 ? 100 : 0);
  return message(OutlierDetectionSchema, {
    enforcingSuccessRate: 0,
    ...(od.consecutive5xxErrors !== undefined && {
      consecutive5xx: od.consecutive5xxErrors,
      enforcingConsecutive5xx: enforce(od.consecutive5xxErrors),
    }),
    ...(od.consecutiveGatewayErrors !== undefined && {
      consecutiveGatewayFailure: od.consecutiveGatewayErrors,
      enforcingConsecutiveGatewayFailure: enforce(od.consecutiveGatewayErrors),
    }),
    ...(od.intervalMs !== undefined && od.intervalMs > 0 && { interval: durationOf(od.intervalMs) }),
    ...(od.baseEjectionTimeMs !== undefined &&
      od.baseEjectionTimeMs > 0 && { baseEjectionTime: durationOf(od.baseEjectionTimeMs) }),
    ...(od.maxEjectionPercent !== undefined &&
      od.maxEjectionPercent > 0 && { maxEjectionPercent: Math.min(od.maxEjectionPercent, 100) }),
  });
}

/** A google.protobuf.Duration of whole milliseconds. */
export function durationOf(ms: number) {
  return create(DurationSchema, {
    seconds: BigInt(Math.floor(ms / 1000)),
    nanos: (ms % 1000) * 1_000_000,
  });
}
