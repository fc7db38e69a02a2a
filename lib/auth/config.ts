/**
 * XDS_AUTH and its settings from the environment (parseConfig calls this): how every read path
 * (ADS, Fetch*, Poll/Watch, REST-JSON, StatusService) authenticates. On a loopback HOST the
 * default is `none`; anywhere else (and always on Workers) it must be chosen, or start-up stops
 * with a line that says exactly what to set.
 */

/** How reads authenticate; `explicit` none was chosen by the operator (and is logged loudly). */
export type XdsAuthConfig =
  | { mode: "none"; explicit: boolean }
  | { mode: "token"; token: string }
  | {
      mode: "jwt";
      issuer: string;
      audiences: string[];
      /** XDS_JWKS_FILE: read once at start-up (Node only). */
      jwksFile?: string;
      /** XDS_JWKS_URL: fetched, cached, refetched on an unknown kid. */
      jwksUrl?: string;
      /** XDS_JWKS: the JWKS document itself (Workers: a var or secret). */
      jwks?: string;
      /** XDS_JWT_HMAC_SECRET: HS256 with a shared secret. */
      hmacSecret?: string;
    };

/** `none`, `token` or `jwt`. */
export type XdsAuthMode = XdsAuthConfig["mode"];

/** Shortest EDGEPILOT_XDS_TOKEN accepted: a token anyone on the network may guess at. */
export const minTokenChars = 16;
/** Shortest XDS_JWT_HMAC_SECRET accepted: RFC 7518 wants an HS256 key of at least 256 bits. */
export const minHmacSecretChars = 32;

/** Where the server listens, for the default and the refusal message. */
export interface XdsAuthContext {
  host: string;
  /** HOST was not set and became 0.0.0.0 because EDGEPILOT_TOKEN is set. */
  hostFromToken: boolean;
  /** The Worker: reachable from anywhere, never loopback. */
  worker: boolean;
  /** An AWS Lambda function URL: reachable from anywhere, never loopback. */
  lambda?: boolean;
}

const choices =
  `XDS_AUTH=token with EDGEPILOT_XDS_TOKEN=<secret, ${minTokenChars}+ characters>, ` +
  "XDS_AUTH=jwt with XDS_JWT_ISSUER, XDS_JWT_AUDIENCE and a key source (XDS_JWKS_URL, XDS_JWKS_FILE, XDS_JWKS " +
  "or XDS_JWT_HMAC_SECRET), or XDS_AUTH=none to serve configuration to anyone who reaches it";

/** Parses the XDS_AUTH settings; each error names its variable and what to set. */
export function parseXdsAuth(
  env: Record<string, string | undefined>,
  where: XdsAuthContext,
  errors: string[],
): XdsAuthConfig {
  const raw = env.XDS_AUTH ?? "";
  if (raw === "") {
    if (!where.worker && !where.lambda && isLoopbackHost(where.host))
      return { mode: "none", explicit: false };
    if (where.lambda)
      errors.push(
        `XDS_AUTH is not set: a Lambda function URL is reachable from anywhere, so choose how proxies authenticate: ${choices} ` +
          "(the function's environment)",
      );
    else if (where.worker)
      errors.push(
        `XDS_AUTH is not set: a Worker is reachable from anywhere, so choose how proxies authenticate: ${choices} ` +
          "(wrangler.toml [vars], `wrangler secret put` for the secrets, or --var for wrangler dev)",
      );
    else
      errors.push(
        `XDS_AUTH is not set and HOST=${where.host} is not a loopback address` +
          (where.hostFromToken ? " (HOST defaults to 0.0.0.0 because EDGEPILOT_TOKEN is set)" : "") +
          `: xDS, Poll/Watch, REST-JSON and StatusService would answer anyone. Set ${choices}` +
          (where.hostFromToken ? "; or set HOST=127.0.0.1 to keep both ports on loopback" : ""),
      );
    return { mode: "none", explicit: false };
  }
  if (raw === "none") return { mode: "none", explicit: true };
  if (raw === "token") {
    const token = env.EDGEPILOT_XDS_TOKEN ?? "";
    if (token.length < minTokenChars)
      errors.push(
        `EDGEPILOT_XDS_TOKEN: XDS_AUTH=token needs a bearer token of at least ${minTokenChars} characters ` +
          `(${token === "" ? "it is not set" : `it has ${token.length}`})` +
          (where.worker ? ": `wrangler secret put EDGEPILOT_XDS_TOKEN`, or --var for wrangler dev" : ""),
      );
    return { mode: "token", token };
  }
  if (raw !== "jwt") {
    errors.push(`XDS_AUTH=${raw}: not one of none, token, jwt`);
    return { mode: "none", explicit: false };
  }
  const issuer = env.XDS_JWT_ISSUER ?? "";
  if (issuer === "")
    errors.push(
      "XDS_JWT_ISSUER: XDS_AUTH=jwt needs the tokens' issuer (a cluster's: `kubectl get --raw /.well-known/openid-configuration`)",
    );
  const audiences = (env.XDS_JWT_AUDIENCE ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (audiences.length === 0)
    errors.push(
      "XDS_JWT_AUDIENCE: XDS_AUTH=jwt needs the audience tokens are minted for (comma-separated list)",
    );
  const pick = (name: string) => {
    const v = env[name];
    return v === undefined || v === "" ? undefined : v;
  };
  const config: XdsAuthConfig = { mode: "jwt", issuer, audiences };
  const jwksFile = pick("XDS_JWKS_FILE");
  const jwksUrl = pick("XDS_JWKS_URL");
  const jwks = pick("XDS_JWKS");
  const hmacSecret = pick("XDS_JWT_HMAC_SECRET");
  if (jwksFile) config.jwksFile = jwksFile;
  if (jwks) config.jwks = jwks;
  if (jwksUrl) {
    let url: URL | undefined;
    try {
      url = new URL(jwksUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
      errors.push(`XDS_JWKS_URL=${jwksUrl}: not an http(s) URL`);
    config.jwksUrl = jwksUrl;
  }
  if (hmacSecret) {
    if (hmacSecret.length < minHmacSecretChars)
      errors.push(
        `XDS_JWT_HMAC_SECRET: at least ${minHmacSecretChars} characters (it has ${hmacSecret.length})`,
      );
    config.hmacSecret = hmacSecret;
  }
  if (!jwksFile && !jwksUrl && !jwks && !hmacSecret)
    errors.push(
      "XDS_AUTH=jwt needs a key source: XDS_JWKS_URL (a cluster's jwks_uri), XDS_JWKS_FILE, XDS_JWKS (the JWKS " +
        "itself) or XDS_JWT_HMAC_SECRET",
    );
  return config;
}

/** True for a HOST that only local callers can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return h === "localhost" || isLoopback(h);
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (a peer address or a bind address). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith("::ffff:") ? address.slice(7) : address;
  return a === "::1" || /^127\.\d+\.\d+\.\d+$/.test(a);
}

/**
 * The start-up line saying how reads are authenticated. An explicit `none` off loopback is
 * shouted, since anyone who reaches the ports can read every Cluster and endpoint.
 */
export function xdsAuthLogLine(auth: XdsAuthConfig, where: { host: string; worker: boolean }): string {
  switch (auth.mode) {
    case "token":
      return "edgepilot: XDS_AUTH=token: every xDS read needs `authorization: Bearer <EDGEPILOT_XDS_TOKEN>`";
    case "jwt": {
      const keys = [
        auth.jwksUrl && `XDS_JWKS_URL ${auth.jwksUrl}`,
        auth.jwksFile && `XDS_JWKS_FILE ${auth.jwksFile}`,
        auth.jwks && "XDS_JWKS",
        auth.hmacSecret && "XDS_JWT_HMAC_SECRET",
      ].filter(Boolean);
      return (
        `edgepilot: XDS_AUTH=jwt: every xDS read needs a service-account JWT from ${auth.issuer} for ` +
        `${auth.audiences.join(" or ")} (keys: ${keys.join(", ")}); a node may only name its token's namespace`
      );
    }
    case "none":
      if (auth.explicit && (where.worker || !isLoopbackHost(where.host)))
        return (
          `edgepilot: WARNING: XDS_AUTH=none: xDS, Poll/Watch, REST-JSON and StatusService on ${where.worker ? "this Worker" : where.host} ` +
          "answer ANYONE who reaches them, unauthenticated: every Cluster, endpoint IP and service name is readable"
        );
      return `edgepilot: XDS_AUTH=none: xDS reads are unauthenticated (${auth.explicit ? "chosen" : "the default"} on loopback ${where.host})`;
  }
}
