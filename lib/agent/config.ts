/** The agent's configuration from environment variables and command-line flags (flags win), validated in one place. */

import { isLoopbackHost } from "../auth/config.ts";
import { parseFlags } from "../cli-flags.ts";
import { logUsage, parseLogConfig } from "../log/config.ts";
import type { LogConfig } from "../log/logger.ts";
import { type CertConfig, certSettings, parseCertConfig } from "./cert-config.ts";
import { type UpstreamHttp, type UpstreamProtocol, upstreamHttps, upstreamProtocols } from "./transport.ts";

/** Validated agent settings. */
export interface AgentConfig {
  /** The upstream Node edgepilot's XDS_PORT, as `http://host:port` (h2c) or `https://host:port` (TLS). */
  upstream: string;
  /** A file holding the bearer token sent upstream; re-read when it changes. Absent: no token. */
  tokenFile: string | undefined;
  /** The namespace of this pod: every local proxy's node must claim it. */
  namespace: string;
  /** Loopback TCP port of the local ADS (0: any free port). */
  port: number;
  /** Unix socket path of the local ADS; absent: none. */
  socket: string | undefined;
  /** Loopback port of GET /ready (0: any free port). */
  readyPort: number;
  /** A directory where the last good configuration is kept across restarts; absent: memory only. */
  cacheDir?: string | undefined;
  /** PEM CA bundle that an https:// upstream's certificate must chain to; absent: Node's default roots. */
  caFile?: string | undefined;
  /** The address GET /ready binds (default 127.0.0.1; in a pod 0.0.0.0, so kubelet's probe reaches it). */
  readyHost?: string | undefined;
  /** How the upstream is asked (default ads): Delta ADS, Connect Watch falling back to Poll, or Poll only (transport.ts). */
  protocol?: UpstreamProtocol;
  /** The HTTP version of a Connect upstream (default "2"): "2" (h2c for http://, ALPN h2 for https://) or "1.1". */
  http?: UpstreamHttp;
  /** LOG_FORMAT and LOG_LEVEL (lib/log/config.ts); absent: text, info. */
  log?: LogConfig;
  /** Workload certificates (SDS and OUTPUT_CERTS, lib/agent/cert-config.ts); absent: none (no SERVICE_ACCOUNT). */
  certs?: CertConfig | undefined;
}

/** A setting: its flag, its variable, its default. */
interface Setting {
  flag: string;
  env: string;
  help: string;
  fallback?: string;
}

/** Every setting, for parsing and for --help. */
export const agentSettings: readonly Setting[] = [
  {
    flag: "upstream",
    env: "EDGEPILOT_AGENT_UPSTREAM",
    help: "upstream (required): a Node XDS_PORT, e.g. http://edgepilot.edgepilot:15010, or a Worker URL",
  },
  {
    flag: "token-file",
    env: "EDGEPILOT_AGENT_TOKEN_FILE",
    help: "file holding the bearer token sent upstream",
  },
  { flag: "namespace", env: "POD_NAMESPACE", help: "this pod's namespace (required)" },
  {
    flag: "port",
    env: "EDGEPILOT_AGENT_PORT",
    fallback: "15011",
    help: "local ADS port on 127.0.0.1, 0 = any",
  },
  { flag: "socket", env: "EDGEPILOT_AGENT_SOCKET", help: "local ADS Unix socket path (off when unset)" },
  {
    flag: "ready-port",
    env: "EDGEPILOT_AGENT_READY_PORT",
    fallback: "15021",
    help: "GET /ready port (on EDGEPILOT_AGENT_READY_HOST)",
  },
  {
    flag: "cache-dir",
    env: "EDGEPILOT_AGENT_CACHE_DIR",
    help: "keep the last good configuration in this directory across restarts (off when unset)",
  },
  {
    flag: "ca-file",
    env: "EDGEPILOT_AGENT_CA_FILE",
    help: "PEM CA bundle for an https:// upstream (default: Node's CA store)",
  },
  {
    flag: "ready-host",
    env: "EDGEPILOT_AGENT_READY_HOST",
    help: "address of GET /ready (default 127.0.0.1); 0.0.0.0 in a pod, for kubelet's probe",
  },
  {
    flag: "upstream-protocol",
    env: "EDGEPILOT_AGENT_UPSTREAM_PROTOCOL",
    fallback: "ads",
    help: "ads (Node XDS_PORT) | watch (Connect Watch, Poll when cut; the Worker) | poll",
  },
  {
    flag: "upstream-http",
    env: "EDGEPILOT_AGENT_UPSTREAM_HTTP",
    fallback: "2",
    help: "HTTP version of a watch/poll upstream: 2 (h2c or TLS ALPN h2) | 1.1",
  },
  ...certSettings,
];

/** The outcome of parsing: a config, a request for help, or every problem found (each names its variable). */
export type AgentConfigResult =
  | { ok: true; config: AgentConfig }
  | { ok: "help" }
  | { ok: false; errors: string[] };

/** Kubernetes namespace names: DNS-1123 labels. */
const namespaceRule = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Parses flags (`--name value`, `--name=value`) over the environment. */
export function parseAgentConfig(
  env: Record<string, string | undefined>,
  argv: readonly string[],
): AgentConfigResult {
  const parsed = parseFlags(
    argv,
    agentSettings,
    (arg) => `${JSON.stringify(arg)}: unknown argument (see edgepilot agent --help)`,
  );
  if (parsed.help) return { ok: "help" };
  const { flags, errors } = parsed;
  const raw = (name: string): { value: string; label: string } | undefined => {
    const f = flags.get(name);
    if (f) return { value: f.value, label: `${f.flag} (${name})` };
    const e = env[name];
    if (e !== undefined && e !== "") return { value: e, label: name };
    const fallback = agentSettings.find((s) => s.env === name)?.fallback;
    return fallback === undefined ? undefined : { value: fallback, label: `${name} (default)` };
  };
  const port = (name: string): number => {
    const r = raw(name) as { value: string; label: string };
    const n = Number(r.value);
    if (!/^\d+$/.test(r.value.trim()) || n > 65535)
      errors.push(`${r.label}=${JSON.stringify(r.value)}: not a port (0-65535)`);
    return n;
  };
  const choice = <T extends string>(name: string, allowed: readonly T[]): T => {
    const r = raw(name) as { value: string; label: string };
    if ((allowed as readonly string[]).includes(r.value)) return r.value as T;
    errors.push(`${r.label}=${JSON.stringify(r.value)}: want one of ${allowed.join(", ")}`);
    return allowed[0] as T;
  };

  let upstream = "";
  const up = raw("EDGEPILOT_AGENT_UPSTREAM");
  if (up === undefined) {
    errors.push(
      "EDGEPILOT_AGENT_UPSTREAM is not set: where is the upstream edgepilot's XDS_PORT? e.g. http://edgepilot.edgepilot:15010",
    );
  } else {
    upstream = checkUpstream(up, errors);
  }
  const ns = raw("POD_NAMESPACE");
  if (ns === undefined)
    errors.push("POD_NAMESPACE is not set: the namespace of this pod (every local proxy must claim it)");
  else if (!namespaceRule.test(ns.value))
    errors.push(`${ns.label}=${JSON.stringify(ns.value)}: not a Kubernetes namespace name`);
  const protocol = choice("EDGEPILOT_AGENT_UPSTREAM_PROTOCOL", upstreamProtocols);
  const http = choice("EDGEPILOT_AGENT_UPSTREAM_HTTP", upstreamHttps);
  if (protocol === "ads" && http === "1.1")
    errors.push(
      "EDGEPILOT_AGENT_UPSTREAM_HTTP=1.1 with EDGEPILOT_AGENT_UPSTREAM_PROTOCOL=ads: ADS is gRPC, HTTP/2 only; use watch or poll over HTTP/1.1",
    );
  const config: AgentConfig = {
    upstream,
    tokenFile: raw("EDGEPILOT_AGENT_TOKEN_FILE")?.value,
    namespace: ns?.value ?? "",
    port: port("EDGEPILOT_AGENT_PORT"),
    socket: raw("EDGEPILOT_AGENT_SOCKET")?.value,
    readyPort: port("EDGEPILOT_AGENT_READY_PORT"),
    cacheDir: raw("EDGEPILOT_AGENT_CACHE_DIR")?.value,
    caFile: raw("EDGEPILOT_AGENT_CA_FILE")?.value,
    readyHost: readyHost(raw("EDGEPILOT_AGENT_READY_HOST"), errors),
    protocol,
    http,
    log: parseLogConfig(env, errors),
  };
  const certs = parseCertConfig(
    raw,
    { url: upstream, protocol, http, tokenFile: config.tokenFile, namespace: config.namespace },
    errors,
  );
  if (certs) config.certs = certs;
  const ca = raw("EDGEPILOT_AGENT_CA_FILE");
  if (ca && upstream.startsWith("http:"))
    errors.push(
      `${ca.label}: set, but the upstream ${upstream} is cleartext (http://); use https:// or unset it`,
    );
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

/** An IP address literal (v4 or v6) to bind GET /ready to; absent: the runtime's 127.0.0.1. */
function readyHost(r: { value: string; label: string } | undefined, errors: string[]): string | undefined {
  if (r === undefined) return undefined;
  const v4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
  if (!v4.test(r.value) && !/^[0-9a-fA-F:]*:[0-9a-fA-F:]*$/.test(r.value))
    errors.push(`${r.label}=${JSON.stringify(r.value)}: not an IP address (e.g. 127.0.0.1 or 0.0.0.0)`);
  return r.value;
}

/** `http://host:port` or `https://host:port`, nothing more; a token over cleartext only to loopback. */
function checkUpstream(r: { value: string; label: string }, errors: string[]): string {
  let u: URL;
  try {
    u = new URL(r.value);
  } catch {
    errors.push(
      `${r.label}=${JSON.stringify(r.value)}: not a URL (want e.g. http://edgepilot.edgepilot:15010)`,
    );
    return "";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    errors.push(`${r.label}: must be http:// (h2c) or https:// (TLS)`);
  if (u.pathname !== "/" || u.search || u.hash || u.username)
    errors.push(`${r.label}: only scheme, host and port`);
  return `${u.protocol}//${u.host}`;
}

/** Whether a cleartext upstream reaches beyond this host (a token would cross the network in the clear). */
export function cleartextOffHost(upstream: string): boolean {
  const u = new URL(upstream);
  return u.protocol === "http:" && !isLoopbackHost(u.hostname.replace(/^\[|\]$/g, ""));
}

/** The --help text, listing every flag with its variable and default. */
export function agentUsage(): string {
  // Columns as wide as their longest entry plus two, so no flag runs into its variable.
  const flagWidth = Math.max(...agentSettings.map((s) => s.flag.length)) + 8;
  const envWidth = Math.max(...agentSettings.map((s) => s.env.length)) + 2;
  const rows = agentSettings.map((s) => {
    const dflt = s.fallback === undefined ? "" : ` (default ${s.fallback})`;
    return `  ${`--${s.flag} <v>`.padEnd(flagWidth)}${s.env.padEnd(envWidth)}${s.help}${dflt}`;
  });
  return [
    "usage: edgepilot agent [flags]",
    "       edgepilot agent bootstrap --generator grpc|envoy [--locality r/z/s] [--admin-port 15000]",
    "",
    "Serves ADS (SotW and Delta) to the proxies of this pod from one upstream (Delta ADS, or Connect Watch/Poll),",
    "keeping the last good configuration when the upstream is away.",
    "",
    ...rows,
    "",
    logUsage,
  ].join("\n");
}
