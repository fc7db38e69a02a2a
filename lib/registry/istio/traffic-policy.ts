/**
 * DestinationRule traffic policies, normalized for generation, and merged as istiod merges them
 * (MergeSubsetTrafficPolicy, GetPortLevelTrafficPolicy): a matching port-level policy replaces the
 * top-level parts entirely (no inheritance), then each part the subset sets replaces the
 * destination's (a subset's matching port-level policy replaces all of them). Parts are whole:
 * a subset's `connectionPool` without http2MaxRequests still replaces the destination's pool.
 */
import { durationMs } from "./duration.ts";

/** SimpleLB as generated; the deprecated LEAST_CONN is LEAST_REQUEST, as in Envoy. */
export type SimpleLb = "UNSPECIFIED" | "RANDOM" | "PASSTHROUGH" | "ROUND_ROBIN" | "LEAST_REQUEST";

/** Consistent hashing: the header to hash on (the only hash key implemented) and the ring. */
export interface ConsistentHash {
  /** The request header hashed (a route hash policy); absent when another key (cookie, source IP, query) is used. */
  httpHeaderName?: string;
  // The other hash keys only Envoy sidecars take (proxyless gRPC hashes on headers only).
  /** httpCookie: the cookie hashed (and generated with ttl when given). */
  httpCookie?: { name: string; path?: string; ttlMs?: number };
  /** useSourceIp: true when set. */
  useSourceIp?: true;
  /** httpQueryParameterName. */
  httpQueryParameterName?: string;
  /** ringHash unless maglev was asked for (maglev is accepted, unsupported by gRPC). */
  algorithm: "ringHash" | "maglev";
  /** ringHash.minimumRingSize, or the deprecated consistentHash.minimumRingSize. */
  minimumRingSize?: number;
  /** True when `ringHash` itself was written (istiod then sets no ring size unless given; else 1024). */
  ringHashSet?: true;
  /** maglev.tableSize when set and not 0. */
  maglevTableSize?: number;
}

/** loadBalancer: a simple policy or consistent hashing (one of them, as the API's oneof). */
export type LoadBalancer = ({ simple: SimpleLb } | { consistentHash: ConsistentHash }) & {
  /** warmupDurationSecs in ms: the slow start window of ROUND_ROBIN / LEAST_REQUEST (Envoy sidecars only). */
  warmupMs?: number;
};

/** connectionPool: present (even empty) whenever the config sets it, since a pool replaces a pool whole. */
export interface ConnectionPool {
  /** http.http2MaxRequests: the circuit breaker's max_requests. */
  http2MaxRequests?: number;
  // The rest only Envoy sidecars take (cluster-pool.ts in generators/sidecar); present when set.
  /** http.http1MaxPendingRequests: max_pending_requests. */
  http1MaxPendingRequests?: number;
  /** http.maxRetries: max_retries. */
  maxRetries?: number;
  /** http.idleTimeout in ms. */
  idleTimeoutMs?: number;
  /** http.maxRequestsPerConnection. */
  maxRequestsPerConnection?: number;
  /** http.maxConcurrentStreams. */
  maxConcurrentStreams?: number;
  /** http.h2UpgradePolicy when not DEFAULT. */
  h2UpgradePolicy?: "UPGRADE" | "DO_NOT_UPGRADE";
  /** http.useClientProtocol. */
  useClientProtocol?: true;
  /** tcp.connectTimeout in ms. */
  connectTimeoutMs?: number;
  /** tcp.maxConnections: max_connections. */
  maxConnections?: number;
  /** tcp.maxConnectionDuration in ms. */
  maxConnectionDurationMs?: number;
  /** tcp.idleTimeout in ms (used when http.idleTimeout is not set). */
  tcpIdleTimeoutMs?: number;
  /** tcp.tcpKeepalive when set (even empty: SO_KEEPALIVE with the OS defaults). */
  tcpKeepalive?: TcpKeepalive;
}

/** tcp.tcpKeepalive: probes when > 0, time and interval in whole seconds when set. */
export interface TcpKeepalive {
  probes?: number;
  timeSeconds?: number;
  intervalSeconds?: number;
}

/** outlierDetection, the fields Envoy's outlier_detection takes from it (durations in ms). */
export interface OutlierDetection {
  consecutive5xxErrors?: number;
  /** consecutiveGatewayErrors, or the deprecated consecutiveErrors (which istiod maps to gateway errors). */
  consecutiveGatewayErrors?: number;
  intervalMs?: number;
  baseEjectionTimeMs?: number;
  maxEjectionPercent?: number;
  /** minHealthPercent: the cluster's healthy panic threshold (istiod writes it, 0 when unset). */
  minHealthPercent?: number;
  /** splitExternalLocalOriginErrors: true when set. */
  splitExternalLocalOriginErrors?: true;
  /** consecutiveLocalOriginFailures when > 0 (taken only with splitExternalLocalOriginErrors). */
  consecutiveLocalOriginFailures?: number;
}

/** The parts of a policy the generators implement; a part is present when the config set it. */
export interface PolicyParts {
  loadBalancer?: LoadBalancer;
  connectionPool?: ConnectionPool;
  outlierDetection?: OutlierDetection;
  /** ClientTLSSettings; proxyless gRPC ignores it, but a set `tls` takes part in the merge like any part. */
  tls?: ClientTls;
}

/** ClientTLSSettings, the fields generated (Envoy sidecars); mode DISABLE when unset, as the API. */
export interface ClientTls {
  mode: "DISABLE" | "SIMPLE" | "MUTUAL" | "ISTIO_MUTUAL";
  sni?: string;
  /** Sorted as written. */
  subjectAltNames?: string[];
  caCertificates?: string;
  clientCertificate?: string;
  privateKey?: string;
  credentialName?: string;
  insecureSkipVerify?: boolean;
}

/** A portLevelSettings entry: its parts replace the policy's for that port. */
export interface PortTrafficPolicy extends PolicyParts {
  port: number;
}

/** A normalized TrafficPolicy (top level or a subset's). */
export interface TrafficPolicy extends PolicyParts {
  portLevelSettings: PortTrafficPolicy[];
}

/** The policy a cluster gets after the merge: no port-level settings left. */
export type EffectivePolicy = PolicyParts;

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : undefined;
const num = (v: unknown): number | undefined =>
  typeof v === "number" ? v : typeof v === "string" && v !== "" ? Number(v) : undefined;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
/** Positive numbers only: istiod cannot tell an unset field from 0 (its FIXME), so 0 is unset. */
const pos = (v: unknown): number | undefined => {
  const n = num(v);
  return n !== undefined && n > 0 ? n : undefined;
};
const ms = (v: unknown): number | undefined => (typeof v === "string" ? durationMs(v) : undefined);
/** Copies only the defined values, so an unset field is absent (equal configs, equal models). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Normalizes a validated TrafficPolicy (top level or a subset's). */
export function toTrafficPolicy(raw: unknown): TrafficPolicy | undefined {
  const r = obj(raw);
  if (!r) return undefined;
  const portLevelSettings: PortTrafficPolicy[] = [];
  for (const pl of Array.isArray(r.portLevelSettings) ? r.portLevelSettings : []) {
    const p = obj(pl);
    const port = num(obj(p?.port)?.number);
    if (p && port !== undefined) portLevelSettings.push({ port, ...toParts(p) });
  }
  return { ...toParts(r), portLevelSettings };
}

function toParts(r: Raw): PolicyParts {
  const out: PolicyParts = {};
  const lb = obj(r.loadBalancer);
  if (lb) out.loadBalancer = toLoadBalancer(lb);
  const cp = obj(r.connectionPool);
  if (cp) out.connectionPool = toPool(cp);
  const od = obj(r.outlierDetection);
  if (od) out.outlierDetection = toOutlier(od);
  const tls = obj(r.tls);
  if (tls) out.tls = toTls(tls);
  return out;
}

function toPool(cp: Raw): ConnectionPool {
  const http = obj(cp.http) ?? {};
  const tcp = obj(cp.tcp) ?? {};
  const h2 = http.h2UpgradePolicy;
  return defined({
    http2MaxRequests: num(http.http2MaxRequests),
    http1MaxPendingRequests: pos(http.http1MaxPendingRequests),
    maxRetries: pos(http.maxRetries),
    idleTimeoutMs: ms(http.idleTimeout),
    maxRequestsPerConnection: pos(http.maxRequestsPerConnection),
    maxConcurrentStreams: pos(http.maxConcurrentStreams),
    h2UpgradePolicy: h2 === "UPGRADE" || h2 === "DO_NOT_UPGRADE" ? h2 : undefined,
    useClientProtocol: http.useClientProtocol === true ? (true as const) : undefined,
    connectTimeoutMs: ms(tcp.connectTimeout),
    maxConnections: pos(tcp.maxConnections),
    maxConnectionDurationMs: ms(tcp.maxConnectionDuration),
    tcpIdleTimeoutMs: ms(tcp.idleTimeout),
    tcpKeepalive: toKeepalive(obj(tcp.tcpKeepalive)),
  });
}

/** setKeepAliveSettings: durations truncated to whole seconds, as istiod writes them. */
function toKeepalive(ka: Raw | undefined): TcpKeepalive | undefined {
  if (!ka) return undefined;
  const seconds = (v: unknown) => {
    const m = ms(v);
    return m === undefined ? undefined : Math.floor(m / 1000);
  };
  return defined({
    probes: pos(ka.probes),
    timeSeconds: seconds(ka.time),
    intervalSeconds: seconds(ka.interval),
  });
}

function toTls(t: Raw): ClientTls {
  const mode = str(t.mode) ?? "DISABLE";
  const sans = Array.isArray(t.subjectAltNames) ? t.subjectAltNames.filter((s) => typeof s === "string") : [];
  return defined({
    mode: mode as ClientTls["mode"],
    sni: str(t.sni),
    subjectAltNames: sans.length > 0 ? sans : undefined,
    caCertificates: str(t.caCertificates),
    clientCertificate: str(t.clientCertificate),
    privateKey: str(t.privateKey),
    credentialName: str(t.credentialName),
    insecureSkipVerify: t.insecureSkipVerify === true ? true : undefined,
  });
}

function toLoadBalancer(lb: Raw): LoadBalancer {
  const warmupMs = ms(lb.warmupDurationSecs);
  const warmup = warmupMs === undefined ? {} : { warmupMs };
  const ch = obj(lb.consistentHash);
  if (!ch) {
    const simple = typeof lb.simple === "string" ? lb.simple : "UNSPECIFIED";
    return { simple: (simple === "LEAST_CONN" ? "LEAST_REQUEST" : simple) as SimpleLb, ...warmup };
  }
  const maglev = obj(ch.maglev);
  const hash: ConsistentHash = { algorithm: maglev ? "maglev" : "ringHash" };
  if (typeof ch.httpHeaderName === "string") hash.httpHeaderName = ch.httpHeaderName;
  const cookie = obj(ch.httpCookie);
  if (cookie && typeof cookie.name === "string")
    hash.httpCookie = defined({ name: cookie.name, path: str(cookie.path), ttlMs: ms(cookie.ttl) });
  if (ch.useSourceIp === true) hash.useSourceIp = true;
  if (typeof ch.httpQueryParameterName === "string") hash.httpQueryParameterName = ch.httpQueryParameterName;
  const size = num(obj(ch.ringHash)?.minimumRingSize) ?? num(ch.minimumRingSize);
  if (hash.algorithm === "ringHash" && size !== undefined && size !== 0) hash.minimumRingSize = size;
  if (!maglev && obj(ch.ringHash)) hash.ringHashSet = true;
  const table = pos(maglev?.tableSize);
  if (table !== undefined) hash.maglevTableSize = table;
  return { consistentHash: hash, ...warmup };
}

function toOutlier(od: Raw): OutlierDetection {
  const out: OutlierDetection = {};
  const c5 = num(od.consecutive5xxErrors);
  if (c5 !== undefined) out.consecutive5xxErrors = c5;
  const gw = num(od.consecutiveGatewayErrors) ?? (num(od.consecutiveErrors) || undefined);
  if (gw !== undefined) out.consecutiveGatewayErrors = gw;
  if (typeof od.interval === "string") out.intervalMs = durationMs(od.interval);
  if (typeof od.baseEjectionTime === "string") out.baseEjectionTimeMs = durationMs(od.baseEjectionTime);
  const mep = num(od.maxEjectionPercent);
  if (mep !== undefined) out.maxEjectionPercent = mep;
  const mhp = num(od.minHealthPercent);
  if (mhp !== undefined) out.minHealthPercent = mhp;
  if (od.splitExternalLocalOriginErrors === true) out.splitExternalLocalOriginErrors = true;
  const lo = pos(od.consecutiveLocalOriginFailures);
  if (lo !== undefined) out.consecutiveLocalOriginFailures = lo;
  return out;
}

const partNames = ["loadBalancer", "connectionPool", "outlierDetection", "tls"] as const;

function copyParts(p: PolicyParts): EffectivePolicy {
  const out: EffectivePolicy = {};
  for (const k of partNames) if (p[k] !== undefined) Object.assign(out, { [k]: p[k] });
  return out;
}

/**
 * GetPortLevelTrafficPolicy: the port-level policy for `port` when the policy has one (its parts
 * alone, nothing inherited), else the policy's own parts.
 */
export function portLevelPolicy(
  policy: TrafficPolicy | undefined,
  port: number,
): { policy: EffectivePolicy | undefined; portLevel: boolean } {
  if (!policy) return { policy: undefined, portLevel: false };
  const pl = policy.portLevelSettings.find((p) => p.port === port);
  return pl ? { policy: copyParts(pl), portLevel: true } : { policy: copyParts(policy), portLevel: false };
}

/**
 * MergeSubsetTrafficPolicy: the destination's policy for `port`, then the subset's parts over it
 * (a subset's port-level policy replaces every part, set or not).
 */
export function mergeSubsetPolicy(
  destination: TrafficPolicy | undefined,
  subset: TrafficPolicy | undefined,
  port: number,
): EffectivePolicy | undefined {
  const original = portLevelPolicy(destination, port).policy;
  if (!subset) return original;
  const { policy: sp, portLevel } = portLevelPolicy(subset, port);
  if (!original) return sp;
  const merged = { ...original };
  for (const k of partNames) {
    if (sp?.[k] === undefined && !portLevel) continue;
    if (sp?.[k] === undefined) delete merged[k];
    else Object.assign(merged, { [k]: sp[k] });
  }
  return merged;
}
