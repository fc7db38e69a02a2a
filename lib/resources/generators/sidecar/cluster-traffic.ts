/**
 * A DestinationRule's traffic policy applied to a sidecar Cluster as istiod applies it
 * (pilot/pkg/networking/core/cluster_traffic_policy.go: applyTrafficPolicy, applyConnectionPool,
 * applyH2Upgrade, applyLoadBalancer, ApplyRingHashLoadBalancer). Outlier detection is the proxyless
 * mapping (cluster-policy.ts policyFields), which is istiod's applyOutlierDetection already; the
 * load balancer differs from it on purpose: Envoy takes LEAST_REQUEST, RANDOM and MAGLEV, which
 * proxyless gRPC cannot.
 */
import { create } from "@bufbuild/protobuf";
import {
  CircuitBreakers_ThresholdsSchema,
  CircuitBreakersSchema,
} from "../../../gen/envoy/config/cluster/v3/circuit_breaker_pb.ts";
import {
  type Cluster,
  Cluster_CommonLbConfigSchema,
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
  Cluster_LeastRequestLbConfigSchema,
  Cluster_MaglevLbConfigSchema,
  Cluster_RingHashLbConfigSchema,
  Cluster_RoundRobinLbConfigSchema,
  Cluster_SlowStartConfigSchema,
  UpstreamConnectionOptionsSchema,
} from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { TcpKeepaliveSchema } from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { PercentSchema } from "../../../gen/envoy/type/v3/percent_pb.ts";
import type { Protocol } from "../../../model/index.ts";
import type {
  ConnectionPool,
  LoadBalancer,
  OutlierDetection,
  TcpKeepalive,
} from "../../../registry/istio/traffic-policy.ts";
import { durationOf, policyFields } from "../cluster-policy.ts";
import { type HttpOptions, isHttp } from "./cluster-common.ts";

const UINT32_MAX = 0xffffffff;
/** Envoy's default ring size, which istiod writes for the deprecated consistentHash.minimumRingSize form. */
const DEFAULT_RING_SIZE = 1024n;

/** A Cluster while it is built: its fields, and the HTTP options packed at the end (clusterWrapper). */
export interface ClusterDraft {
  fields: Partial<Cluster>;
  http: HttpOptions | undefined;
}

/** The cluster's discovery type (the `type` of cluster_discovery_type). */
export function discoveryType(d: ClusterDraft): Cluster_DiscoveryType | undefined {
  const t = d.fields.clusterDiscoveryType;
  return t?.case === "type" ? t.value : undefined;
}

/**
 * applyConnectionPool (always called, with an empty pool when the rule sets none): the mesh
 * connect timeout unless tcp.connectTimeout, one circuit-breaker threshold with Istio's defaults
 * (all 2^32-1, track_remaining) lowered by what the pool sets, and the HTTP idle timeout, max
 * requests per connection, max connection duration and max concurrent streams (HTTP/2 only).
 */
export function applyConnectionPool(d: ClusterDraft, pool: ConnectionPool, connectTimeoutMs: number): void {
  d.fields.connectTimeout = durationOf(pool.connectTimeoutMs ?? connectTimeoutMs);
  applyTcpKeepalive(d, pool.tcpKeepalive);
  const positive = (v: number | undefined) =>
    v !== undefined && v > 0 ? Math.min(v, UINT32_MAX) : UINT32_MAX;
  d.fields.circuitBreakers = create(CircuitBreakersSchema, {
    thresholds: [
      create(CircuitBreakers_ThresholdsSchema, {
        maxConnections: positive(pool.maxConnections),
        maxPendingRequests: positive(pool.http1MaxPendingRequests),
        maxRequests: positive(pool.http2MaxRequests),
        maxRetries: positive(pool.maxRetries),
        trackRemaining: true,
      }),
    ],
  });
  const idleMs = pool.idleTimeoutMs ?? pool.tcpIdleTimeoutMs;
  const streams = pool.maxConcurrentStreams;
  if (
    idleMs !== undefined ||
    pool.maxRequestsPerConnection !== undefined ||
    pool.maxConnectionDurationMs !== undefined ||
    streams !== undefined
  ) {
    const http: HttpOptions = { ...d.http };
    if (idleMs !== undefined) http.idleTimeout = durationOf(idleMs);
    if (pool.maxRequestsPerConnection !== undefined)
      http.maxRequestsPerConnection = pool.maxRequestsPerConnection;
    if (pool.maxConnectionDurationMs !== undefined)
      http.maxConnectionDuration = durationOf(pool.maxConnectionDurationMs);
    if (streams !== undefined && http.upstream === "h2") http.maxConcurrentStreams = streams;
    d.http = http;
  }
  // setUseDownstreamProtocol replaces the upstream protocol options.
  if (pool.useClientProtocol) d.http = { ...withoutUpstream(d.http), upstream: "downstream" };
}

/**
 * applyH2Upgrade (outbound only): the pool's UPGRADE makes the cluster HTTP/2 whatever the port,
 * DO_NOT_UPGRADE never; otherwise only an HTTP port is upgraded, and only when the mesh's
 * h2UpgradePolicy is UPGRADE (its default is DO_NOT_UPGRADE, the one we serve).
 */
export function applyH2Upgrade(d: ClusterDraft, protocol: Protocol, pool: ConnectionPool): void {
  const upgrade = pool.h2UpgradePolicy === "UPGRADE";
  if (!upgrade || (pool.h2UpgradePolicy === undefined && !isHttp(protocol))) return;
  // setH2Options: fresh HTTP/2 options (max_concurrent_streams set before is not kept).
  d.http = { ...withoutUpstream(d.http), upstream: "h2" };
}

function withoutUpstream(h: HttpOptions | undefined): HttpOptions {
  const { upstream: _u, maxConcurrentStreams: _m, ...rest } = h ?? {};
  return rest;
}

/**
 * applyOutlierDetection: the proxyless mapping (success rate off, consecutive errors enforced at
 * 100% when > 0, interval, base ejection time, max ejection percent), then what only Envoy takes:
 * splitExternalLocalOriginErrors (consecutive local-origin failures enforced at 100% when > 0,
 * local-origin success rate off) and the healthy panic threshold at minHealthPercent (0 unless set).
 */
export function applyOutlierDetection(d: ClusterDraft, od: OutlierDetection | undefined): void {
  if (!od) return;
  const out = policyFields({ outlierDetection: od }).outlierDetection;
  if (out && od.splitExternalLocalOriginErrors) {
    out.splitExternalLocalOriginErrors = true;
    if (od.consecutiveLocalOriginFailures !== undefined) {
      out.consecutiveLocalOriginFailure = od.consecutiveLocalOriginFailures;
      out.enforcingConsecutiveLocalOriginFailure = 100;
    }
    out.enforcingLocalOriginSuccessRate = 0;
  }
  d.fields.outlierDetection = out;
  const common = d.fields.commonLbConfig ?? create(Cluster_CommonLbConfigSchema);
  common.healthyPanicThreshold = create(PercentSchema, { value: od.minHealthPercent ?? 0 });
  d.fields.commonLbConfig = common;
}

/**
 * applyTCPKeepalive (setKeepAliveSettings) with the DestinationRule's tcp.tcpKeepalive: SO_KEEPALIVE
 * (an empty tcp_keepalive) plus the probes, time and interval it sets. MeshConfig.tcpKeepalive is
 * not modelled (SidecarMeshSettings has none).
 */
function applyTcpKeepalive(d: ClusterDraft, ka: TcpKeepalive | undefined): void {
  if (!ka) return;
  d.fields.upstreamConnectionOptions = create(UpstreamConnectionOptionsSchema, {
    tcpKeepalive: create(TcpKeepaliveSchema, {
      ...(ka.probes !== undefined && { keepaliveProbes: Math.min(ka.probes, UINT32_MAX) }),
      ...(ka.timeSeconds !== undefined && { keepaliveTime: Math.min(ka.timeSeconds, UINT32_MAX) }),
      ...(ka.intervalSeconds !== undefined && {
        keepaliveInterval: Math.min(ka.intervalSeconds, UINT32_MAX),
      }),
    }),
  });
}

/**
 * applyLoadBalancer: ORIGINAL_DST clusters are CLUSTER_PROVIDED; LEAST_REQUEST (LEAST_CONN),
 * RANDOM, ROUND_ROBIN as written, with warmupDurationSecs as slow start; PASSTHROUGH turns the
 * cluster into ORIGINAL_DST (its load assignment dropped); anything else, no rule included, gets
 * Istio's default LEAST_REQUEST. Consistent hashing then overrides: MAGLEV (table size when set),
 * RING_HASH with the size written, or, for the deprecated form, RING_HASH with the size or 1024.
 */
export function applyLoadBalancer(d: ClusterDraft, lb: LoadBalancer | undefined): void {
  const f = d.fields;
  if (discoveryType(d) === Cluster_DiscoveryType.ORIGINAL_DST) {
    f.lbPolicy = Cluster_LbPolicy.CLUSTER_PROVIDED;
    return;
  }
  const simple = lb && "simple" in lb ? lb.simple : "UNSPECIFIED";
  const slowStart =
    lb?.warmupMs !== undefined
      ? create(Cluster_SlowStartConfigSchema, { slowStartWindow: durationOf(lb.warmupMs) })
      : undefined;
  if (simple === "RANDOM") f.lbPolicy = Cluster_LbPolicy.RANDOM;
  else if (simple === "PASSTHROUGH") {
    f.lbPolicy = Cluster_LbPolicy.CLUSTER_PROVIDED;
    f.clusterDiscoveryType = { case: "type", value: Cluster_DiscoveryType.ORIGINAL_DST };
    delete f.loadAssignment;
  } else if (simple === "ROUND_ROBIN") {
    f.lbPolicy = Cluster_LbPolicy.ROUND_ROBIN;
    if (slowStart)
      f.lbConfig = {
        case: "roundRobinLbConfig",
        value: create(Cluster_RoundRobinLbConfigSchema, { slowStartConfig: slowStart }),
      };
  } else {
    f.lbPolicy = Cluster_LbPolicy.LEAST_REQUEST;
    if (slowStart)
      f.lbConfig = {
        case: "leastRequestLbConfig",
        value: create(Cluster_LeastRequestLbConfigSchema, { slowStartConfig: slowStart }),
      };
  }
  if (!lb || !("consistentHash" in lb)) return;
  const ch = lb.consistentHash;
  if (ch.algorithm === "maglev") {
    f.lbPolicy = Cluster_LbPolicy.MAGLEV;
    if (ch.maglevTableSize !== undefined)
      f.lbConfig = {
        case: "maglevLbConfig",
        value: create(Cluster_MaglevLbConfigSchema, { tableSize: BigInt(ch.maglevTableSize) }),
      };
    return;
  }
  f.lbPolicy = Cluster_LbPolicy.RING_HASH;
  const size = ch.minimumRingSize !== undefined ? BigInt(ch.minimumRingSize) : undefined;
  if (ch.ringHashSet && size === undefined) return;
  f.lbConfig = {
    case: "ringHashLbConfig",
    value: create(Cluster_RingHashLbConfigSchema, { minimumRingSize: size ?? DEFAULT_RING_SIZE }),
  };
}
