/**
 * JSON Web Key Sets (RFC 7517) for verifying service-account JWTs: the public RS256 and ES256
 * signing keys of a set, imported by jose's importJWK (WebCrypto, so this runs on Workers too).
 * Bounded: a set over jwksLimits is refused before it is parsed, and keys we cannot use are
 * skipped with a reason, not fatal. Keys are imported here, eagerly, rather than by jose's
 * createLocalJWKSet on a token's first use, so a bad key is reported in the start-up log.
 */
import { base64url, importJWK } from "jose";
import { logSafe } from "../log-safe.ts";

/** The JWS algorithms edgepilot verifies; `none` and every other one are refused. */
export type JwsAlg = "RS256" | "ES256" | "HS256";

/** The largest JWKS document (bytes) and the most keys one may hold. */
export const jwksLimits = { maxBytes: 256 * 1024, maxKeys: 100 } as const;

/** A verification key from a JWKS: its kid (if any), the one algorithm it verifies, the key. */
export interface VerifyKey {
  kid: string | undefined;
  alg: "RS256" | "ES256";
  key: CryptoKey;
}

/** The keys of a JWKS, and a note per key that was skipped (kept for the start-up log). */
export type JwksResult = { ok: true; keys: VerifyKey[]; skipped: string[] } | { ok: false; error: string };

/** Parses and imports a JWKS document; errors say what is wrong with it, never echo key material. */
export async function importJwks(text: string): Promise<JwksResult> {
  if (text.length > jwksLimits.maxBytes)
    return { ok: false, error: `JWKS is ${text.length} bytes; at most ${jwksLimits.maxBytes}` };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `JWKS is not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  const list = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) return { ok: false, error: 'JWKS must be an object with a "keys" array' };
  if (list.length > jwksLimits.maxKeys)
    return { ok: false, error: `JWKS holds ${list.length} keys; at most ${jwksLimits.maxKeys}` };
  const keys: VerifyKey[] = [];
  const skipped: string[] = [];
  for (const [i, jwk] of list.entries()) {
    const r = await importJwk(jwk);
    if ("key" in r) keys.push(r);
    else skipped.push(`keys[${i}]: ${r.skip}`);
  }
  if (keys.length === 0)
    return {
      ok: false,
      error: `JWKS holds no RS256 or ES256 signing key (${skipped.join("; ") || "empty"})`,
    };
  return { ok: true, keys, skipped };
}

/** The key's byte length of `n`, or undefined when it is no base64url string. */
function modulusBytes(n: unknown): number | undefined {
  if (typeof n !== "string") return undefined;
  try {
    return base64url.decode(n).length;
  } catch {
    return undefined;
  }
}

/**
 * One JWK as a VerifyKey, or why it is skipped. The policy is ours (signing keys only, RSA of
 * 2048 bits or more, EC on P-256); the import is jose's.
 */
async function importJwk(raw: unknown): Promise<VerifyKey | { skip: string }> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { skip: "not an object" };
  const jwk = raw as Record<string, unknown>;
  const kid = typeof jwk.kid === "string" ? jwk.kid : undefined;
  const name = kid === undefined ? "" : ` (kid ${logSafe(kid, 64)})`;
  if (jwk.use !== undefined && jwk.use !== "sig")
    return { skip: `use ${logSafe(jwk.use, 16)} is not sig${name}` };
  const alg = jwk.kty === "RSA" ? "RS256" : jwk.kty === "EC" ? "ES256" : undefined;
  if (!alg) return { skip: `kty ${logSafe(jwk.kty, 16)} is not RSA or EC${name}` };
  if (jwk.alg !== undefined && jwk.alg !== alg)
    return { skip: `alg ${logSafe(jwk.alg, 16)} is not verified here (RS256, ES256)${name}` };
  let material: { kty: string; [k: string]: string };
  if (alg === "RS256") {
    const n = modulusBytes(jwk.n);
    if (n === undefined || typeof jwk.e !== "string") return { skip: `RSA key without n and e${name}` };
    if (n < 256) return { skip: `RSA key of ${n * 8} bits; at least 2048${name}` };
    material = { kty: "RSA", n: jwk.n as string, e: jwk.e };
  } else {
    if (jwk.crv !== "P-256") return { skip: `EC curve ${logSafe(jwk.crv, 16)} is not P-256${name}` };
    if (typeof jwk.x !== "string" || typeof jwk.y !== "string")
      return { skip: `EC key without x and y${name}` };
    material = { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y };
  }
  try {
    // Only the public members: a JWKS that leaks a private part still yields a verify-only key.
    const key = await importJWK(material, alg, { extractable: false });
    if (key instanceof Uint8Array) return { skip: `not an asymmetric key${name}` };
    return { kid, alg, key };
  } catch (e) {
    return { skip: `could not import${name}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
