/** The relay's configuration from environment variables and command-line flags (flags win), validated. */
import { parseFlags } from "../cli-flags.ts";
import { logUsage, parseLogConfig } from "../log/config.ts";
import type { LogConfig } from "../log/logger.ts";
import { parseDuration } from "../push/debounce.ts";

/**
 * The cluster id rule of lib/config.ts (isClusterId), restated so the relay does not load the control
 * plane's configuration (and through it the registry); test/unit/relay/config.test.ts keeps them equal.
 */
const clusterIdRule = "a cluster id is 1-63 characters of letters, digits, '.', '_' or '-'";
const isClusterId = (s: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(s);

/** Validated relay settings. Durations are in milliseconds. */
export interface RelayConfig {
  /** Where ingest lives, without a trailing slash: POSTs go to `${url}/v1/events` and `/v1/resync`. */
  url: string;
  token: string | undefined;
  clusterId: string;
  /** Every kind is relisted and resynced this often; 0 turns the periodic resync off. */
  resyncPeriodMs: number;
  batchSize: number;
  batchDelayMs: number;
  /** Past this many queued events the relay stops watching until the queue drains, then relists. */
  maxQueuedEvents: number;
  /** Items per list page (limit/continue). */
  listPageSize: number;
  watchEndpoints: boolean;
  /** ISTIO_NAMESPACE: the one namespace where the mesh ConfigMap `istio` is watched. */
  istioNamespace: string;
  /** Watch the kinds whose CRDs are served (the Istio and Gateway API kinds), at the newest version served. */
  watchIstio: boolean;
  /** API discovery of those CRDs is re-run this often (and at each periodic resync); 0: only at the resync. */
  discoveryIntervalMs: number;
  /** How long SIGTERM waits for the queue to drain. */
  shutdownTimeoutMs: number;
  /** The Gateway API statuses are fetched and written back this often (and after each delivered batch); 0: never. */
  statusIntervalMs: number;
  /** Log one line per event queued (debugging). */
  logEvents: boolean;
  /** GET /healthz and /ready on this port (0 = any free port); undefined: no health endpoint. */
  healthPort: number | undefined;
  /** The address the health endpoint binds (0.0.0.0 for kubelet's probes). */
  healthHost: string;
  /** LOG_FORMAT and LOG_LEVEL (lib/log/config.ts); absent: text, info. */
  log?: LogConfig;
}

/** A setting: its flag, its variable, and how it is read. */
interface Setting {
  flag: string;
  env: string;
  kind: "string" | "int" | "duration" | "bool";
  help: string;
  fallback?: string;
  min?: number;
  max?: number;
}

/** Every setting, for parsing and for --help. EDGEPILOT_TOKEN has no flag: a flag would show in `ps`. */
export const relaySettings: readonly Setting[] = [
  {
    flag: "url",
    env: "EDGEPILOT_URL",
    kind: "string",
    help: "ingest base URL (required), e.g. http://edgepilot:8080",
  },
  { flag: "", env: "EDGEPILOT_TOKEN", kind: "string", help: "bearer token for ingest (environment only)" },
  { flag: "cluster", env: "CLUSTER_ID", kind: "string", fallback: "Kubernetes", help: "this cluster's id" },
  {
    flag: "resync-period",
    env: "RELAY_RESYNC_PERIOD",
    kind: "duration",
    fallback: "10m",
    help: "full relist, 0 = off",
  },
  {
    flag: "batch-size",
    env: "RELAY_BATCH_SIZE",
    kind: "int",
    fallback: "500",
    min: 1,
    max: 10_000,
    help: "events per POST",
  },
  {
    flag: "batch-delay",
    env: "RELAY_BATCH_DELAY",
    kind: "duration",
    fallback: "100ms",
    help: "wait for a batch to fill",
  },
  {
    flag: "max-queue",
    env: "RELAY_MAX_QUEUE",
    kind: "int",
    fallback: "10000",
    min: 1,
    max: 10_000_000,
    help: "queued events before the relay stops watching",
  },
  {
    flag: "page-size",
    env: "RELAY_LIST_PAGE_SIZE",
    kind: "int",
    fallback: "500",
    min: 1,
    max: 100_000,
    help: "items per list page",
  },
  {
    flag: "endpoints",
    env: "RELAY_WATCH_ENDPOINTS",
    kind: "bool",
    fallback: "false",
    help: "also watch v1 Endpoints",
  },
  {
    flag: "istio-namespace",
    env: "ISTIO_NAMESPACE",
    kind: "string",
    fallback: "istio-system",
    help: "the namespace of the mesh ConfigMap `istio` (watched there only, by name)",
  },
  {
    flag: "istio",
    env: "RELAY_WATCH_ISTIO",
    kind: "bool",
    fallback: "true",
    help: "watch the Istio and Gateway API kinds whose CRDs are served, each at its newest served version",
  },
  {
    flag: "discovery-interval",
    env: "RELAY_DISCOVERY_INTERVAL",
    kind: "duration",
    fallback: "30s",
    help: "re-run discovery of the Istio and Gateway API CRDs (install, upgrade), 0 = only at each resync",
  },
  {
    flag: "shutdown-timeout",
    env: "RELAY_SHUTDOWN_TIMEOUT",
    kind: "duration",
    fallback: "10s",
    help: "SIGTERM: longest wait to flush the queue",
  },
  {
    flag: "status-interval",
    env: "RELAY_STATUS_INTERVAL",
    kind: "duration",
    fallback: "5s",
    help: "write the Gateway API statuses back this often and after each batch, 0 = never",
  },
  {
    flag: "log-events",
    env: "RELAY_LOG_EVENTS",
    kind: "bool",
    fallback: "false",
    help: "log one line per event queued",
  },
  {
    flag: "health-port",
    env: "RELAY_HEALTH_PORT",
    kind: "int",
    min: 0,
    max: 65_535,
    help: "GET /healthz and /ready on this port (unset = off, 0 = any free port)",
  },
  {
    flag: "health-host",
    env: "RELAY_HEALTH_HOST",
    kind: "string",
    fallback: "127.0.0.1",
    help: "address the health endpoint binds (0.0.0.0 for kubelet)",
  },
];

/** The outcome of parsing: a config, a request for help, or every problem found (each names its variable). */
export type RelayConfigResult =
  | { ok: true; config: RelayConfig }
  | { ok: "help" }
  | { ok: false; errors: string[] };

/** Parses flags (`--name value`, `--name=value`, `--endpoints`, `--no-istio`) over the environment. */
export function parseRelayConfig(
  env: Record<string, string | undefined>,
  argv: readonly string[],
): RelayConfigResult {
  const parsed = parseFlags(
    argv,
    relaySettings.map((s) => ({ flag: s.flag, env: s.env, bool: s.kind === "bool" })),
    (arg) => `${arg}: unknown argument (see --help)`,
  );
  if (parsed.help) return { ok: "help" };
  const { flags, errors } = parsed;

  const raw = (name: string): { value: string; label: string } | undefined => {
    const f = flags.get(name);
    if (f) return { value: f.value, label: `${f.flag}=${f.value} (${name})` };
    const e = env[name];
    if (e !== undefined && e !== "") return { value: e, label: `${name}=${e}` };
    const fallback = relaySettings.find((s) => s.env === name)?.fallback;
    return fallback === undefined ? undefined : { value: fallback, label: `${name} default ${fallback}` };
  };
  const int = (name: string): number => {
    const s = relaySettings.find((x) => x.env === name) as Setting;
    const r = raw(name) as { value: string; label: string };
    const n = Number(r.value);
    if (!/^\d+$/.test(r.value.trim()) || n < (s.min ?? 0) || n > (s.max ?? Number.MAX_SAFE_INTEGER)) {
      errors.push(`${r.label}: not a whole number from ${s.min ?? 0} to ${s.max}`);
    }
    return n;
  };
  const duration = (name: string): number => {
    const r = raw(name) as { value: string; label: string };
    const d = parseDuration(r.value);
    if (!d.ok) errors.push(`${r.label}: ${d.error}`);
    return d.ok ? d.ms : 0;
  };
  const bool = (name: string): boolean => {
    const r = raw(name) as { value: string; label: string };
    const v = r.value.toLowerCase();
    if (["true", "1", "yes", "on"].includes(v)) return true;
    if (!["false", "0", "no", "off"].includes(v)) errors.push(`${r.label}: not a boolean (true or false)`);
    return false;
  };

  const namespaceName = (name: string): string => {
    const r = raw(name) as { value: string; label: string };
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(r.value) || r.value.length > 63)
      errors.push(`${r.label}: not a namespace name (a lowercase RFC 1123 label)`);
    return r.value;
  };

  const url = raw("EDGEPILOT_URL");
  let base = "";
  if (url === undefined)
    errors.push("EDGEPILOT_URL is not set: where does ingest live? e.g. http://edgepilot.edgepilot:8080");
  else base = checkUrl(url, errors);
  const cluster = raw("CLUSTER_ID") as { value: string; label: string };
  if (!isClusterId(cluster.value)) errors.push(`${cluster.label}: ${clusterIdRule}`);

  const config: RelayConfig = {
    url: base,
    token: env.EDGEPILOT_TOKEN || undefined,
    clusterId: cluster.value,
    resyncPeriodMs: duration("RELAY_RESYNC_PERIOD"),
    batchSize: int("RELAY_BATCH_SIZE"),
    batchDelayMs: duration("RELAY_BATCH_DELAY"),
    maxQueuedEvents: int("RELAY_MAX_QUEUE"),
    listPageSize: int("RELAY_LIST_PAGE_SIZE"),
    watchEndpoints: bool("RELAY_WATCH_ENDPOINTS"),
    istioNamespace: namespaceName("ISTIO_NAMESPACE"),
    watchIstio: bool("RELAY_WATCH_ISTIO"),
    discoveryIntervalMs: duration("RELAY_DISCOVERY_INTERVAL"),
    shutdownTimeoutMs: duration("RELAY_SHUTDOWN_TIMEOUT"),
    statusIntervalMs: duration("RELAY_STATUS_INTERVAL"),
    logEvents: bool("RELAY_LOG_EVENTS"),
    healthPort: raw("RELAY_HEALTH_PORT") === undefined ? undefined : int("RELAY_HEALTH_PORT"),
    healthHost: (raw("RELAY_HEALTH_HOST") as { value: string }).value,
    log: parseLogConfig(env, errors),
  };
  if (config.discoveryIntervalMs > 0 && config.discoveryIntervalMs < 1000) {
    const r = raw("RELAY_DISCOVERY_INTERVAL") as { label: string };
    errors.push(`${r.label}: at least 1s (each round is 2-4 GETs to the API server), or 0 for off`);
  }
  if (errors.length === 0 && config.maxQueuedEvents < config.batchSize) {
    errors.push(
      `RELAY_MAX_QUEUE=${config.maxQueuedEvents}: must be at least RELAY_BATCH_SIZE (${config.batchSize})`,
    );
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

function checkUrl(r: { value: string; label: string }, errors: string[]): string {
  let u: URL;
  try {
    u = new URL(r.value);
  } catch {
    errors.push(`${r.label}: not a URL (want e.g. http://edgepilot.edgepilot:8080)`);
    return "";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    errors.push(`${r.label}: must be http:// or https://`);
  if (u.search || u.hash) errors.push(`${r.label}: must not have a query or fragment`);
  return u.href.replace(/\/+$/, "");
}

/** The --help text, listing every flag with its variable and default. */
export function relayUsage(): string {
  const rows = relaySettings.map((s) => {
    const flag = s.flag === "" ? "" : s.kind === "bool" ? `--[no-]${s.flag}` : `--${s.flag} <v>`;
    const dflt = s.fallback === undefined ? "" : ` (default ${s.fallback})`;
    return `  ${flag.padEnd(26)}${s.env.padEnd(26)}${s.help}${dflt}`;
  });
  return [
    "usage: edgepilot relay [flags]",
    "",
    "Lists and watches Kubernetes and posts the events to edgepilot's ingest.",
    "Kubernetes access: KUBECONFIG, ~/.kube/config, or the pod's service account.",
    "",
    ...rows,
    "",
    logUsage,
  ].join("\n");
}
