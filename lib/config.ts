/** Runtime configuration from environment variables, validated, with Istio's defaults. */
import { parseXdsAuth, type XdsAuthConfig } from "./auth/config.ts";
import { type CaSettings, defaultCaSettings } from "./ca/config.ts";
import type { MeshSettings } from "./core/mesh-core.ts";
import { defaultPollIntervalMs } from "./core/store-follower.ts";
import { parseLogConfig } from "./log/config.ts";
import type { LogConfig } from "./log/logger.ts";
import { parseDuration } from "./push/debounce.ts";
import { parseDiscoverySelectors } from "./registry/kube/selectors.ts";
import { DEFAULT_ISTIO_NAMESPACE } from "./registry/mesh/istio-configmap.ts";
import { dns1123Label } from "./registry/names.ts";
import { envelopeBytes } from "./xds/budget.ts";
import { defaultLimits, type Limits } from "./xds/limits.ts";

/** Everything a host reads from its environment; the mesh core takes its MeshSettings part. */
export interface Config extends MeshSettings {
  port: number;
  xdsPort: number;
  host: string;
  token: string | undefined;
  clusterId: string;
  /** What one xDS client may ask of an instance (Poll, Watch, REST; ADS reads maxStreams). */
  limits: Limits;
  /** Where Node keeps mesh state (EDGEPILOT_STORE); the Worker always uses its Durable Object. */
  store: StoreConfig;
  /**
   * EDGEPILOT_STORE_POLL_INTERVAL (ms, default 1s): how often an instance over a shared store
   * (sharedStore) reads it for pushes other instances made (lib/core/store-follower.ts).
   */
  storePollIntervalMs: number;
  /** XDS_AUTH: how every read path authenticates (lib/auth/config.ts). */
  xdsAuth: XdsAuthConfig;
  /** LOG_FORMAT (text or json) and LOG_LEVEL (per scope, istiod's --log_output_level): lib/log/config.ts. */
  log: LogConfig;
  /** The certificate authority (istiod's names: ROOT_CA_DIR, DEFAULT_WORKLOAD_CERT_TTL, ...): lib/ca/config.ts. */
  ca: CaSettings;
}

/**
 * EDGEPILOT_STORE: `memory` (the default; gone on restart), `file` in EDGEPILOT_DATA_DIR (durable),
 * or `dynamodb` (durable and shared: lib/store/dynamodb.ts).
 */
export type StoreConfig = { kind: "memory" } | { kind: "file"; dataDir: string } | DynamoStoreConfig;

/** EDGEPILOT_STORE=dynamodb: the table, and where it is (a local server, or AWS in a region). */
export interface DynamoStoreConfig {
  kind: "dynamodb";
  /** DYNAMODB_TABLE (default `edgepilot`). */
  table: string;
  /** DYNAMODB_ENDPOINT: a local server (dynalite, DynamoDB Local); start-up then creates the table if missing. */
  endpoint?: string;
  /** AWS_REGION (required without an endpoint; `us-east-1` for a local server when unset). */
  region: string;
  /** A local endpoint and no AWS credentials in the environment: placeholder ones (local servers check none). */
  localCredentials: boolean;
}

export type Env = Record<string, string | undefined>;

/** Where the configuration runs: the Worker and a Lambda are never on loopback, so they must choose XDS_AUTH. */
export interface ParseOptions {
  worker?: boolean;
  /** An AWS Lambda behind a function URL (functions/lambda/): reachable from anywhere. */
  lambda?: boolean;
}

/** Parses the environment; every problem is reported at once, naming the variable. */
export function parseConfig(
  env: Env,
  options: ParseOptions = {},
): { ok: true; config: Config } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const port = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      errors.push(`${name}=${raw}: not a port number (0-65535)`);
    return n;
  };
  const duration = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const d = parseDuration(raw);
    if (!d.ok) errors.push(`${name}: ${d.error}`);
    return d.ok ? d.ms : fallback;
  };
  const pollInterval = (): number => {
    const ms = duration("EDGEPILOT_STORE_POLL_INTERVAL", defaultPollIntervalMs);
    if (ms > 0) return ms;
    errors.push(`EDGEPILOT_STORE_POLL_INTERVAL=${env.EDGEPILOT_STORE_POLL_INTERVAL}: must be more than 0`);
    return defaultPollIntervalMs;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.toLowerCase();
    if (raw === undefined || raw === "") return fallback;
    if (["true", "1", "yes", "on"].includes(raw)) return true;
    if (["false", "0", "no", "off"].includes(raw)) return false;
    errors.push(`${name}=${env[name]}: not a boolean (true or false)`);
    return fallback;
  };
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) {
      errors.push(`${name}=${raw}: not a positive whole number`);
      return fallback;
    }
    return n;
  };
  /** Istio reads 0 or unset as "choose the default"; fractions are allowed (0.5 = one every 2s). */
  const rate = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) {
      errors.push(`${name}=${raw}: not a non-negative number of requests per second`);
      return fallback;
    }
    return n === 0 ? fallback : n;
  };
  /** Room for at least one small resource besides a response's envelope (type URL, nonce, version). */
  const responseBytes = (): number => {
    const name = "EDGEPILOT_MAX_RESPONSE_BYTES";
    const n = positive(name, defaultLimits.maxResponseBytes);
    if (n >= 2 * envelopeBytes) return n;
    errors.push(
      `${name}=${env[name]}: at least ${2 * envelopeBytes} bytes (a response's envelope alone takes up to ${envelopeBytes})`,
    );
    return defaultLimits.maxResponseBytes;
  };
  const token = env.EDGEPILOT_TOKEN || undefined;
  const clusterId = env.CLUSTER_ID || "Kubernetes";
  if (!isClusterId(clusterId)) errors.push(`CLUSTER_ID=${clusterId}: ${clusterIdRule}`);
  const dnsSuffix = (name: string): string => {
    const value = env[name] || "cluster.local";
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(value)) errors.push(`${name}=${value}: not a DNS suffix`);
    return value;
  };
  const istioNamespace = (): string => {
    const value = env.ISTIO_NAMESPACE || DEFAULT_ISTIO_NAMESPACE;
    const why = dns1123Label(value);
    if (why) errors.push(`ISTIO_NAMESPACE=${value}: not a namespace name: ${why}`);
    return value;
  };
  const selectors = parseDiscoverySelectors(env.DISCOVERY_SELECTORS || "[]");
  if (!selectors.ok) errors.push(`DISCOVERY_SELECTORS: ${selectors.error}`);
  const host = env.HOST || (token ? "0.0.0.0" : "127.0.0.1");
  const xdsAuth = parseXdsAuth(
    env,
    {
      host,
      hostFromToken: !env.HOST && token !== undefined,
      worker: options.worker === true,
      lambda: options.lambda === true,
    },
    errors,
  );
  const config: Config = {
    port: port("PORT", 8080),
    xdsPort: port("XDS_PORT", 15010),
    host,
    token,
    debounce: {
      debounceAfter: duration("PILOT_DEBOUNCE_AFTER", 100),
      debounceMax: duration("PILOT_DEBOUNCE_MAX", 10_000),
      enableEdsDebounce: bool("PILOT_ENABLE_EDS_DEBOUNCE", true),
    },
    registry: {
      domainSuffix: dnsSuffix("DOMAIN_SUFFIX"),
      trustDomain: dnsSuffix("TRUST_DOMAIN"),
      sendUnhealthy: bool("PILOT_SEND_UNHEALTHY_ENDPOINTS", false),
      useEndpointSlice: bool("PILOT_USE_ENDPOINT_SLICE", true),
      discoverySelectors: selectors.ok ? selectors.selectors : [],
      enableAutoMtls: bool("EDGEPILOT_ENABLE_AUTO_MTLS", true),
      istioNamespace: istioNamespace(),
    },
    clusterId,
    limits: {
      maxNamesPerRequest: positive("EDGEPILOT_MAX_NAMES_PER_REQUEST", defaultLimits.maxNamesPerRequest),
      maxRequestBytes: positive("EDGEPILOT_MAX_REQUEST_BYTES", defaultLimits.maxRequestBytes),
      maxResponseBytes: responseBytes(),
      maxStreams: positive("EDGEPILOT_MAX_STREAMS", defaultLimits.maxStreams),
      maxStreamsPerConnection: positive(
        "EDGEPILOT_MAX_STREAMS_PER_CONNECTION",
        defaultLimits.maxStreamsPerConnection,
      ),
      maxRequestsPerSecond: rate("PILOT_MAX_REQUESTS_PER_SECOND", defaultLimits.maxRequestsPerSecond),
    },
    store: parseStore(env, errors),
    syncTimeoutMs: duration("PILOT_SYNC_TIMEOUT", 60_000),
    storePollIntervalMs: pollInterval(),
    xdsAuth,
    log: parseLogConfig(env, errors),
    ca: parseCa(env, duration, bool, errors),
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

/** The CA's settings; a TTL must be positive, TOKEN_AUDIENCES name at least one audience. */
function parseCa(
  env: Env,
  duration: (name: string, fallback: number) => number,
  bool: (name: string, fallback: boolean) => boolean,
  errors: string[],
): CaSettings {
  const d = defaultCaSettings;
  const ttl = (name: string, fallback: number) => {
    const ms = duration(name, fallback);
    if (ms > 0) return ms;
    errors.push(`${name}=${env[name]}: must be more than 0`);
    return fallback;
  };
  const audiences = (env.TOKEN_AUDIENCES || d.tokenAudiences.join(","))
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (audiences.length === 0)
    errors.push(`TOKEN_AUDIENCES=${env.TOKEN_AUDIENCES}: name at least one audience`);
  return {
    enabled: bool("ENABLE_CA_SERVER", d.enabled),
    ...(env.ROOT_CA_DIR && { rootCaDir: env.ROOT_CA_DIR }),
    defaultWorkloadCertTtlMs: ttl("DEFAULT_WORKLOAD_CERT_TTL", d.defaultWorkloadCertTtlMs),
    maxWorkloadCertTtlMs: ttl("MAX_WORKLOAD_CERT_TTL", d.maxWorkloadCertTtlMs),
    selfSignedCaCertTtlMs: ttl("CITADEL_SELF_SIGNED_CA_CERT_TTL", d.selfSignedCaCertTtlMs),
    tokenAudiences: audiences.length > 0 ? audiences : d.tokenAudiences,
  };
}

/**
 * EDGEPILOT_STORE and EDGEPILOT_DATA_DIR. The file store needs its directory named (no default
 * under whatever directory the process happens to start in), and a directory given to the memory
 * store is refused rather than ignored, so nobody believes state is kept when it is not.
 */
function parseStore(env: Env, errors: string[]): StoreConfig {
  const kind = env.EDGEPILOT_STORE || "memory";
  const dataDir = env.EDGEPILOT_DATA_DIR || undefined;
  if (kind !== "dynamodb")
    for (const name of ["DYNAMODB_TABLE", "DYNAMODB_ENDPOINT"] as const)
      if (env[name])
        errors.push(
          `${name}=${env[name]}: set EDGEPILOT_STORE=dynamodb to use it (the ${kind} store ignores it)`,
        );
  switch (kind) {
    case "memory":
      if (dataDir !== undefined)
        errors.push(
          `EDGEPILOT_DATA_DIR=${dataDir}: the memory store keeps nothing on disk; set EDGEPILOT_STORE=file to use it`,
        );
      return { kind };
    case "file":
      if (dataDir === undefined) errors.push("EDGEPILOT_DATA_DIR: required with EDGEPILOT_STORE=file");
      return { kind, dataDir: dataDir ?? "" };
    case "dynamodb":
      if (dataDir !== undefined)
        errors.push(`EDGEPILOT_DATA_DIR=${dataDir}: the dynamodb store keeps nothing on disk`);
      return parseDynamoStore(env, errors);
    default:
      errors.push(`EDGEPILOT_STORE=${kind}: not a store (memory, file or dynamodb)`);
      return { kind: "memory" };
  }
}

/** DYNAMODB_TABLE, DYNAMODB_ENDPOINT and AWS_REGION for EDGEPILOT_STORE=dynamodb. */
function parseDynamoStore(env: Env, errors: string[]): DynamoStoreConfig {
  const table = env.DYNAMODB_TABLE || "edgepilot";
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table))
    errors.push(`DYNAMODB_TABLE=${table}: a table name is 3-255 letters, digits, '_', '-' or '.'`);
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  if (endpoint !== undefined && !isHttpUrl(endpoint))
    errors.push(`DYNAMODB_ENDPOINT=${endpoint}: not an http(s) URL (e.g. http://127.0.0.1:4567)`);
  const region = env.AWS_REGION || undefined;
  if (region === undefined && endpoint === undefined)
    errors.push(
      "AWS_REGION: required with EDGEPILOT_STORE=dynamodb (or DYNAMODB_ENDPOINT for a local server)",
    );
  return {
    kind: "dynamodb",
    table,
    ...(endpoint !== undefined && { endpoint }),
    region: region ?? "us-east-1",
    localCredentials: endpoint !== undefined && !env.AWS_ACCESS_KEY_ID && !env.AWS_PROFILE,
  };
}

function isHttpUrl(s: string): boolean {
  try {
    const url = new URL(s);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

export const clusterIdRule = "a cluster id is 1-63 characters of letters, digits, '.', '_' or '-'";

/** True for a cluster id we accept: it becomes part of store keys, so no "/" and no spaces. */
export function isClusterId(s: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(s);
}

/**
 * Whether other instances may write the store at the same time (EDGEPILOT_STORE=dynamodb: several
 * instances behind a load balancer over one table): the mesh core then serializes ingest across
 * them and follows the pushes they make (MeshCoreOptions.shared). Memory and file stores belong
 * to one process.
 */
export function sharedStore(store: StoreConfig): boolean {
  return store.kind === "dynamodb";
}
