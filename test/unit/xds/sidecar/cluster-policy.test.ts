/**
 * Each DestinationRule traffic-policy field maps onto the sidecar Cluster as istiod maps it
 * (pilot/pkg/networking/core/cluster_traffic_policy.go applyConnectionPool, applyTCPKeepalive, applyH2Upgrade,
 * applyLoadBalancer, ApplyRingHashLoadBalancer, applyOutlierDetection; cluster_tls.go
 * buildUpstreamTLSSettings / buildUpstreamClusterTLSContext / constructUpstreamTLS;
 * pilot/pkg/networking/util MergeSubsetTrafficPolicy, GetPortLevelTrafficPolicy). One row per
 * mapping: each asserts the field the mapping writes, so breaking it fails its row.
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { outboundClusters } from "../../../../lib/resources/generators/sidecar/cluster-outbound.ts";
import { defaultSidecarMesh } from "../../../../lib/resources/generators/sidecar/types.ts";
import { host, reviewsRule, reviewsView } from "./bookinfo.ts";
import {
  assertClustersValid,
  byName,
  httpOptions,
  istioMeta,
  lbName,
  tlsContext,
  typeName,
  upstream,
} from "./cluster-view.ts";

const DEFAULT = `outbound|9080||${host("reviews")}`;
const V2 = `outbound|9080|v2|${host("reviews")}`;
const ctx = { mesh: { ...defaultSidecarMesh }, proxyIps: ["10.0.0.5"] };

function clustersFor(spec: Record<string, unknown>) {
  const out = outboundClusters(reviewsView(reviewsRule(spec)), ctx);
  assertClustersValid(out);
  return out;
}
const cluster = (spec: Record<string, unknown>, name = DEFAULT) => byName(clustersFor(spec), name);
const tp = (trafficPolicy: Record<string, unknown>) => ({ trafficPolicy });
const threshold = (c: Cluster) => c.circuitBreakers?.thresholds[0];
const lbConfig = (c: Cluster) => [c.lbConfig.case, c.lbConfig.value] as const;

type Row = [string, Record<string, unknown>, (c: Cluster) => unknown, unknown, string?];

const rows: Row[] = [
  ["no rule policy: LEAST_REQUEST", {}, lbName, "LEAST_REQUEST"],
  ["simple ROUND_ROBIN", tp({ loadBalancer: { simple: "ROUND_ROBIN" } }), lbName, "ROUND_ROBIN"],
  ["simple RANDOM", tp({ loadBalancer: { simple: "RANDOM" } }), lbName, "RANDOM"],
  [
    "simple LEAST_CONN is LEAST_REQUEST",
    tp({ loadBalancer: { simple: "LEAST_CONN" } }),
    lbName,
    "LEAST_REQUEST",
  ],
  [
    "warmupDurationSecs: round robin slow start",
    tp({ loadBalancer: { simple: "ROUND_ROBIN", warmupDurationSecs: "30s" } }),
    (c) =>
      c.lbConfig.case === "roundRobinLbConfig" && c.lbConfig.value.slowStartConfig?.slowStartWindow?.seconds,
    30n,
  ],
  [
    "warmupDurationSecs: least request slow start by default",
    tp({ loadBalancer: { warmupDurationSecs: "15s" } }),
    (c) =>
      c.lbConfig.case === "leastRequestLbConfig" &&
      c.lbConfig.value.slowStartConfig?.slowStartWindow?.seconds,
    15n,
  ],
  [
    "ringHash with a size: RING_HASH and the size",
    tp({
      loadBalancer: { consistentHash: { httpHeaderName: "x-user", ringHash: { minimumRingSize: 2048 } } },
    }),
    (c) => [
      lbName(c),
      lbConfig(c)[0],
      c.lbConfig.case === "ringHashLbConfig" && c.lbConfig.value.minimumRingSize,
    ],
    ["RING_HASH", "ringHashLbConfig", 2048n],
  ],
  [
    "ringHash without a size: RING_HASH, no lb config",
    tp({ loadBalancer: { consistentHash: { httpHeaderName: "x-user", ringHash: {} } } }),
    (c) => [lbName(c), c.lbConfig.case],
    ["RING_HASH", undefined],
  ],
  [
    "deprecated consistent hash form: RING_HASH with Envoy's 1024",
    tp({ loadBalancer: { consistentHash: { useSourceIp: true } } }),
    (c) => [lbName(c), c.lbConfig.case === "ringHashLbConfig" && c.lbConfig.value.minimumRingSize],
    ["RING_HASH", 1024n],
  ],
  [
    "maglev: MAGLEV and the table size",
    tp({ loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } } }),
    (c) => [lbName(c), c.lbConfig.case === "maglevLbConfig" && c.lbConfig.value.tableSize],
    ["MAGLEV", 65537n],
  ],
  [
    "PASSTHROUGH: ORIGINAL_DST, CLUSTER_PROVIDED, no EDS config, no auto mTLS",
    tp({ loadBalancer: { simple: "PASSTHROUGH" } }),
    (c) => [typeName(c), lbName(c), c.edsClusterConfig, c.transportSocketMatches.length],
    ["ORIGINAL_DST", "CLUSTER_PROVIDED", undefined, 0],
  ],
  [
    "tcp.connectTimeout",
    tp({ connectionPool: { tcp: { connectTimeout: "3s" } } }),
    (c) => c.connectTimeout?.seconds,
    3n,
  ],
  [
    "tcp.maxConnections",
    tp({ connectionPool: { tcp: { maxConnections: 100 } } }),
    (c) => threshold(c)?.maxConnections,
    100,
  ],
  [
    "http.http1MaxPendingRequests",
    tp({ connectionPool: { http: { http1MaxPendingRequests: 5 } } }),
    (c) => threshold(c)?.maxPendingRequests,
    5,
  ],
  [
    "http.http2MaxRequests",
    tp({ connectionPool: { http: { http2MaxRequests: 7 } } }),
    (c) => threshold(c)?.maxRequests,
    7,
  ],
  [
    "http.maxRetries",
    tp({ connectionPool: { http: { maxRetries: 2 } } }),
    (c) => threshold(c)?.maxRetries,
    2,
  ],
  [
    "http.idleTimeout and maxRequestsPerConnection: common HTTP options (explicit HTTP/1.1)",
    tp({ connectionPool: { http: { idleTimeout: "60s", maxRequestsPerConnection: 1 } } }),
    (c) => {
      const common = httpOptions(c)?.commonHttpProtocolOptions;
      return [common?.idleTimeout?.seconds, common?.maxRequestsPerConnection, upstream(c)];
    },
    [60n, 1, "h1"],
  ],
  [
    "tcp.idleTimeout stands in for http.idleTimeout",
    tp({ connectionPool: { tcp: { idleTimeout: "2m" } } }),
    (c) => httpOptions(c)?.commonHttpProtocolOptions?.idleTimeout?.seconds,
    120n,
  ],
  [
    "tcp.maxConnectionDuration",
    tp({ connectionPool: { tcp: { maxConnectionDuration: "1h" } } }),
    (c) => httpOptions(c)?.commonHttpProtocolOptions?.maxConnectionDuration?.seconds,
    3600n,
  ],
  [
    "http.h2UpgradePolicy UPGRADE",
    tp({ connectionPool: { http: { h2UpgradePolicy: "UPGRADE" } } }),
    upstream,
    "h2",
  ],
  [
    "http.useClientProtocol",
    tp({ connectionPool: { http: { useClientProtocol: true } } }),
    upstream,
    "downstream",
  ],
  [
    "outlierDetection: consecutive errors enforced at 100%, durations, percent, panic threshold 0",
    tp({
      outlierDetection: {
        consecutive5xxErrors: 5,
        consecutiveGatewayErrors: 3,
        interval: "10s",
        baseEjectionTime: "30s",
        maxEjectionPercent: 50,
      },
    }),
    (c) => {
      const o = c.outlierDetection;
      return [
        o?.consecutive5xx,
        o?.enforcingConsecutive5xx,
        o?.consecutiveGatewayFailure,
        o?.enforcingConsecutiveGatewayFailure,
        o?.enforcingSuccessRate,
        o?.interval?.seconds,
        o?.baseEjectionTime?.seconds,
        o?.maxEjectionPercent,
        c.commonLbConfig?.healthyPanicThreshold?.value,
      ];
    },
    [5, 100, 3, 100, 0, 10n, 30n, 50, 0],
  ],
  [
    // applyOutlierDetection: HealthyPanicThreshold = minHealthPercent.
    "outlierDetection.minHealthPercent: the healthy panic threshold",
    tp({ outlierDetection: { consecutive5xxErrors: 5, minHealthPercent: 40 } }),
    (c) => c.commonLbConfig?.healthyPanicThreshold?.value,
    40,
  ],
  [
    // applyOutlierDetection: split_external_local_origin_errors, its consecutive failures enforced
    // at 100%, the local-origin success rate off.
    "outlierDetection.splitExternalLocalOriginErrors with consecutiveLocalOriginFailures",
    tp({ outlierDetection: { splitExternalLocalOriginErrors: true, consecutiveLocalOriginFailures: 4 } }),
    (c) => {
      const o = c.outlierDetection;
      return [
        o?.splitExternalLocalOriginErrors,
        o?.consecutiveLocalOriginFailure,
        o?.enforcingConsecutiveLocalOriginFailure,
        o?.enforcingLocalOriginSuccessRate,
      ];
    },
    [true, 4, 100, 0],
  ],
  [
    "outlierDetection without splitExternalLocalOriginErrors: no local-origin fields",
    tp({ outlierDetection: { consecutive5xxErrors: 5 } }),
    (c) => [
      c.outlierDetection?.splitExternalLocalOriginErrors,
      c.outlierDetection?.enforcingLocalOriginSuccessRate,
    ],
    [false, undefined],
  ],
  [
    // applyTCPKeepalive / setKeepAliveSettings: whole seconds, probes when > 0.
    "tcp.tcpKeepalive: upstream_connection_options.tcp_keepalive",
    tp({ connectionPool: { tcp: { tcpKeepalive: { probes: 3, time: "7200s", interval: "75.5s" } } } }),
    (c) => {
      const k = c.upstreamConnectionOptions?.tcpKeepalive;
      return [k?.keepaliveProbes, k?.keepaliveTime, k?.keepaliveInterval];
    },
    [3, 7200, 75],
  ],
  [
    "tcp.tcpKeepalive empty: SO_KEEPALIVE with the OS defaults (an empty tcp_keepalive)",
    tp({ connectionPool: { tcp: { tcpKeepalive: {} } } }),
    (c) => {
      const k = c.upstreamConnectionOptions?.tcpKeepalive;
      return [k !== undefined, k?.keepaliveProbes, k?.keepaliveTime, k?.keepaliveInterval];
    },
    [true, undefined, undefined, undefined],
  ],
  [
    "no tcpKeepalive: no upstream_connection_options",
    tp({ connectionPool: { tcp: { maxConnections: 1 } } }),
    (c) => c.upstreamConnectionOptions,
    undefined,
  ],
  [
    "tls ISTIO_MUTUAL: a transport socket (no matches), the default SNI, the endpoints' SANs",
    tp({ tls: { mode: "ISTIO_MUTUAL" } }),
    (c) => [c.transportSocketMatches.length, c.transportSocket?.name, tlsContext(c)?.sni],
    [0, "envoy.transport_sockets.tls", `outbound_.9080_._.${host("reviews")}`],
  ],
  [
    "tls ISTIO_MUTUAL with sni and subjectAltNames as written",
    tp({ tls: { mode: "ISTIO_MUTUAL", sni: "reviews.example", subjectAltNames: ["spiffe://x/y"] } }),
    (c) => {
      const ctx = tlsContext(c);
      const v = ctx?.commonTlsContext?.validationContextType;
      const sans =
        v?.case === "combinedValidationContext" ? v.value.defaultValidationContext?.matchSubjectAltNames : [];
      return [ctx?.sni, sans?.map((m) => m.matchPattern.value)];
    },
    ["reviews.example", ["spiffe://x/y"]],
  ],
  [
    "tls DISABLE: plaintext, no transport socket, no matches",
    tp({ tls: { mode: "DISABLE" } }),
    (c) => [c.transportSocket, c.transportSocketMatches.length],
    [undefined, 0],
  ],
  [
    // util.AddALPNOverrideToMetadata: SIMPLE and MUTUAL only.
    'tls SIMPLE: istio metadata alpn_override "false"',
    tp({ tls: { mode: "SIMPLE", sni: "reviews.example" } }),
    (c) => istioMeta(c)?.alpn_override,
    "false",
  ],
  [
    "tls ISTIO_MUTUAL: no alpn_override",
    tp({ tls: { mode: "ISTIO_MUTUAL" } }),
    (c) => istioMeta(c)?.alpn_override,
    undefined,
  ],
  [
    "tls SIMPLE with sni: TLS with that SNI, system CA over SDS",
    tp({ tls: { mode: "SIMPLE", sni: "reviews.example" } }),
    (c) => {
      const ctx = tlsContext(c);
      const v = ctx?.commonTlsContext?.validationContextType;
      return [
        ctx?.sni,
        v?.case === "combinedValidationContext" && v.value.validationContextSdsSecretConfig?.name,
      ];
    },
    ["reviews.example", "file-root:system"],
  ],
  [
    "tls SIMPLE without sni: auto_sni and auto_san_validation",
    tp({ tls: { mode: "SIMPLE" } }),
    (c) => {
      const u = httpOptions(c)?.upstreamHttpProtocolOptions;
      return [u?.autoSni, u?.autoSanValidation];
    },
    [true, true],
  ],
  [
    "portLevelSettings replace the top-level policy for their port",
    tp({
      loadBalancer: { simple: "ROUND_ROBIN" },
      portLevelSettings: [{ port: { number: 9080 }, loadBalancer: { simple: "RANDOM" } }],
    }),
    lbName,
    "RANDOM",
  ],
  [
    "a subset's policy overrides the rule's for its cluster",
    {
      trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
      subsets: [
        { name: "v2", labels: { version: "v2" }, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } },
      ],
    },
    lbName,
    "RANDOM",
    V2,
  ],
  [
    "the default cluster keeps the rule's policy when a subset overrides it",
    {
      trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
      subsets: [
        { name: "v2", labels: { version: "v2" }, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } },
      ],
    },
    lbName,
    "ROUND_ROBIN",
  ],
];

describe("DestinationRule traffic policy ▶ sidecar Cluster", () => {
  it.each(rows)("%s", (_, spec, read, want, name) => {
    expect(read(cluster(spec, name ?? DEFAULT))).toEqual(want);
  });

  it("the PGV check catches a broken cluster (so the rows' validity checks can fail)", () => {
    const broken = outboundClusters(reviewsView(reviewsRule({})), ctx)[0];
    if (!broken) throw new Error("no cluster");
    broken.message.connectTimeout = { $typeName: "google.protobuf.Duration", seconds: -1n, nanos: 0 };
    expect(() => assertClustersValid([broken])).toThrow(/connect_timeout/);
  });
});
