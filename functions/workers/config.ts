/** The Worker's configuration: the same parseConfig as Node, fed from wrangler vars and secrets. */
import { type Config, parseConfig } from "../../lib/config.ts";
import type { Env } from "./index.ts";

/** The variables parseConfig reads, picked from the Worker env (bindings are not strings). */
export function configEnv(env: Env): Record<string, string | undefined> {
  return {
    EDGEPILOT_TOKEN: env.EDGEPILOT_TOKEN,
    PILOT_DEBOUNCE_AFTER: env.PILOT_DEBOUNCE_AFTER,
    PILOT_DEBOUNCE_MAX: env.PILOT_DEBOUNCE_MAX,
    PILOT_ENABLE_EDS_DEBOUNCE: env.PILOT_ENABLE_EDS_DEBOUNCE,
    DOMAIN_SUFFIX: env.DOMAIN_SUFFIX,
    CLUSTER_ID: env.CLUSTER_ID,
    EDGEPILOT_MAX_NAMES_PER_REQUEST: env.EDGEPILOT_MAX_NAMES_PER_REQUEST,
    EDGEPILOT_MAX_REQUEST_BYTES: env.EDGEPILOT_MAX_REQUEST_BYTES,
    EDGEPILOT_MAX_RESPONSE_BYTES: env.EDGEPILOT_MAX_RESPONSE_BYTES,
    EDGEPILOT_MAX_STREAMS: env.EDGEPILOT_MAX_STREAMS,
    PILOT_SYNC_TIMEOUT: env.PILOT_SYNC_TIMEOUT,
    XDS_AUTH: env.XDS_AUTH,
    EDGEPILOT_XDS_TOKEN: env.EDGEPILOT_XDS_TOKEN,
    XDS_JWT_ISSUER: env.XDS_JWT_ISSUER,
    XDS_JWT_AUDIENCE: env.XDS_JWT_AUDIENCE,
    XDS_JWKS_URL: env.XDS_JWKS_URL,
    XDS_JWKS: env.XDS_JWKS,
    XDS_JWT_HMAC_SECRET: env.XDS_JWT_HMAC_SECRET,
    LOG_FORMAT: env.LOG_FORMAT,
    LOG_LEVEL: env.LOG_LEVEL,
    ENABLE_CA_SERVER: env.ENABLE_CA_SERVER,
    TOKEN_AUDIENCES: env.TOKEN_AUDIENCES,
    DEFAULT_WORKLOAD_CERT_TTL: env.DEFAULT_WORKLOAD_CERT_TTL,
    MAX_WORKLOAD_CERT_TTL: env.MAX_WORKLOAD_CERT_TTL,
    CITADEL_SELF_SIGNED_CA_CERT_TTL: env.CITADEL_SELF_SIGNED_CA_CERT_TTL,
    TRUST_DOMAIN: env.TRUST_DOMAIN,
    ISTIO_NAMESPACE: env.ISTIO_NAMESPACE,
  };
}

/** Parses the Worker env; throws one Error naming every bad variable, so nothing runs half-configured. */
export function workerConfig(env: Env): Config {
  // A Worker is never on loopback: XDS_AUTH must be chosen (XDS_JWKS_FILE does not exist here).
  const parsed = parseConfig(configEnv(env), { worker: true });
  if (!parsed.ok) throw new ConfigError(parsed.errors);
  return parsed.config;
}

/** A configuration the Worker refuses to run with; `errors` name each variable. */
export class ConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`edgepilot: config: ${errors.join("; ")}`);
    this.name = "ConfigError";
  }
}
