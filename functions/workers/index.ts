/**
 * Cloudflare Workers entry: ingest, readiness, xDS over Connect and REST (see app.ts), a cron kick as
 * the debounce's safety net, and the MeshStore Durable Object that wrangler.toml binds as MESH.
 */
import { meshStub, serve } from "./app.ts";
import type { MeshStore } from "./mesh-store.ts";

export { MeshStore } from "./mesh-store.ts";

/** Bindings, vars and secrets from wrangler.toml (EDGEPILOT_TOKEN is a secret or a var). */
export interface Env {
  MESH: DurableObjectNamespace<MeshStore>;
  EDGEPILOT_TOKEN?: string;
  PILOT_DEBOUNCE_AFTER: string;
  PILOT_DEBOUNCE_MAX: string;
  PILOT_ENABLE_EDS_DEBOUNCE: string;
  DOMAIN_SUFFIX: string;
  CLUSTER_ID: string;
  EDGEPILOT_MAX_NAMES_PER_REQUEST?: string;
  EDGEPILOT_MAX_REQUEST_BYTES?: string;
  EDGEPILOT_MAX_RESPONSE_BYTES?: string;
  EDGEPILOT_MAX_STREAMS?: string;
  PILOT_SYNC_TIMEOUT?: string;
  /** XDS_AUTH (required here) and its settings: see lib/auth/config.ts and the README. */
  XDS_AUTH?: string;
  EDGEPILOT_XDS_TOKEN?: string;
  XDS_JWT_ISSUER?: string;
  XDS_JWT_AUDIENCE?: string;
  XDS_JWKS_URL?: string;
  XDS_JWKS?: string;
  XDS_JWT_HMAC_SECRET?: string;
  /** LOG_FORMAT (text or json) and LOG_LEVEL (per scope): lib/log/config.ts. */
  LOG_FORMAT?: string;
  LOG_LEVEL?: string;
  /** The CA (lib/ca/config.ts): ENABLE_CA_SERVER, TOKEN_AUDIENCES, the TTLs and TRUST_DOMAIN. */
  ENABLE_CA_SERVER?: string;
  TOKEN_AUDIENCES?: string;
  DEFAULT_WORKLOAD_CERT_TTL?: string;
  MAX_WORKLOAD_CERT_TTL?: string;
  CITADEL_SELF_SIGNED_CA_CERT_TTL?: string;
  TRUST_DOMAIN?: string;
  /** Where the mesh ConfigMap `istio` is read (istio-system when unset): lib/config.ts. */
  ISTIO_NAMESPACE?: string;
  /** A plug-in CA: the four files of Istio's ROOT_CA_DIR layout as secrets (functions/workers/ca.ts). */
  CA_CERT_PEM?: string;
  CA_KEY_PEM?: string;
  CERT_CHAIN_PEM?: string;
  ROOT_CERT_PEM?: string;
}

/** `fetch` serves app.ts's routes; `scheduled` (the cron) makes sure a debounce turn runs. */
export default {
  fetch: serve,
  async scheduled(_controller, env) {
    await meshStub(env).kick();
  },
} satisfies ExportedHandler<Env>;
