/**
 * The keys a JWT may be signed with: a shared HMAC secret (HS256), static JWKS keys (a file or an
 * inline set, read at start-up) and a JWKS URL, fetched through a port (lib stays free of I/O),
 * cached, refetched when older than maxAgeMs and on an unknown kid — at most once per
 * minRefreshMs, so a client sending random kids cannot make us hammer the issuer.
 * Our own rather than jose's createRemoteJWKSet, which times its cooldown and cache age with
 * Date.now() (not the injected clock), fails every token when a stale set's refetch fails instead
 * of keeping the keys it has, and reads a response of any size; jose's createLocalJWKSet cannot say
 * which kid was missing or how old the set is. jose imports (jwks.ts) and verifies (jwt.ts).
 */

import { logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import { importJwks, type JwsAlg, type VerifyKey } from "./jwks.ts";
import type { JwsHeader, KeyResolver } from "./jwt.ts";

/** Fetches the JWKS document at a URL (functions/ implements it with fetch); throws with a reason. */
export type JwksFetcher = (url: string) => Promise<string>;

/** Where keys come from; every source optional, but jwt mode configures at least one. */
export interface KeySetOptions {
  /** XDS_JWT_HMAC_SECRET: enables HS256. */
  hmacSecret?: string;
  /** Keys known at start-up (XDS_JWKS_FILE, XDS_JWKS), possibly still being imported. */
  staticKeys?: readonly VerifyKey[] | Promise<readonly VerifyKey[]>;
  /** XDS_JWKS_URL and how to fetch it. */
  url?: { href: string; fetch: JwksFetcher };
  now: () => number;
  /** Fewest ms between two fetches (default 30s). */
  minRefreshMs?: number;
  /** Fetched keys are refetched when older than this (default 5 min); kept if the refetch fails. */
  maxAgeMs?: number;
  log?: (line: string) => void;
}

/** A KeyResolver plus what it accepts. */
export interface KeySet {
  resolve: KeyResolver;
  /** The algorithms some configured source can verify. */
  algorithms: ReadonlySet<JwsAlg>;
}

/** Builds the key set; HMAC and static keys are ready at once, URL keys on first use. */
export function createKeySet(options: KeySetOptions): KeySet {
  const minRefreshMs = options.minRefreshMs ?? 30_000;
  const maxAgeMs = options.maxAgeMs ?? 300_000;
  const log = options.log ?? (() => {});
  let staticKeys: readonly VerifyKey[] = [];
  const staticReady = Promise.resolve(options.staticKeys ?? []).then((keys) => {
    staticKeys = keys;
  });
  // A bad static source is reported by every resolve (and by the runtime at start-up), never unhandled.
  staticReady.catch(() => undefined);
  let hmac: Promise<CryptoKey> | undefined;
  let fetched: { keys: VerifyKey[]; at: number } | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let lastError: string | undefined;
  let inflight: Promise<void> | undefined;

  const algorithms = new Set<JwsAlg>();
  if (options.hmacSecret) algorithms.add("HS256");
  if (options.staticKeys || options.url) {
    algorithms.add("RS256");
    algorithms.add("ES256");
  }

  /** One fetch at a time; a failed fetch keeps what was fetched before. */
  function refresh(): Promise<void> {
    const url = options.url;
    if (!url) return Promise.resolve();
    inflight ??= (async () => {
      lastAttempt = options.now();
      try {
        const result = await importJwks(await url.fetch(url.href));
        if (!result.ok) throw new Error(result.error);
        fetched = { keys: result.keys, at: options.now() };
        lastError = undefined;
      } catch (e) {
        lastError = e instanceof Error ? e.message : String(e);
        logWarn(log, `auth: JWKS from ${logSafe(url.href)} not refreshed: ${logSafe(lastError)}`);
      } finally {
        inflight = undefined;
      }
    })();
    return inflight;
  }

  const mayRefresh = () => options.url !== undefined && options.now() - lastAttempt >= minRefreshMs;

  function find(header: JwsHeader): VerifyKey[] {
    const all = [...staticKeys, ...(fetched?.keys ?? [])].filter((k) => k.alg === header.alg);
    return header.kid === undefined ? all : all.filter((k) => k.kid === header.kid);
  }

  const resolve: KeyResolver = async (header) => {
    if (header.alg === "HS256") {
      if (!options.hmacSecret) return { ok: false, error: "HS256 is not configured (XDS_JWT_HMAC_SECRET)" };
      // One CryptoKey for the secret: given raw bytes, jose would import them on every verify.
      hmac ??= crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(options.hmacSecret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["verify"],
      );
      return { ok: true, key: await hmac };
    }
    const loaded = await staticReady.then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    if (loaded !== undefined)
      return { ok: false, error: `the configured JWKS could not be loaded: ${loaded}` };
    if (fetched && options.now() - fetched.at > maxAgeMs && mayRefresh()) await refresh();
    if (!fetched && options.url && (mayRefresh() || inflight)) await (inflight ?? refresh());
    let keys = find(header);
    if (keys.length === 0 && mayRefresh()) {
      await refresh();
      keys = find(header);
    }
    const alg = header.alg as "RS256" | "ES256";
    if (keys.length === 1 && keys[0]) return { ok: true, key: keys[0].key };
    if (keys.length > 1)
      return {
        ok: false,
        error: `the token has no kid and ${keys.length} ${alg} keys are configured: name one`,
      };
    if (!fetched && lastError !== undefined && staticKeys.length === 0)
      return {
        ok: false,
        error: `no JWKS yet: fetching XDS_JWKS_URL failed (${logSafe(lastError, 128)}); retried at most every ${minRefreshMs / 1000}s`,
      };
    if (header.kid === undefined) return { ok: false, error: `no ${alg} key is configured` };
    const when = fetched
      ? `; the JWKS was fetched ${Math.round((options.now() - fetched.at) / 1000)}s ago`
      : "";
    return { ok: false, error: `unknown kid ${logSafe(header.kid, 64)} for ${alg}${when}` };
  };
  return { resolve, algorithms };
}
