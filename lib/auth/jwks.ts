/**
 * JSON Web Key Sets (RFC 7517) for verifying service-account JWTs: the public RS256 and ES256
 * signing keys of a set, imported with WebCrypto (so this runs on Workers too). Bounded: a set
 * over jwksLimits is refused before it is parsed, and keys we cannot use are skipped, not fatal.
 */
import { logSafe } from "../log-safe.ts";
import { base64UrlDecode } from "./base64url.ts";

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

/** WebCrypto parameters of each asymmetric JWS algorithm. */
export const verifyParams = {
  RS256: { name: "RSASSA-PKCS1-v1_5" },
  ES256: { name: "ECDSA", hash: "SHA-256" },
} as const;

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
  try {
    if (alg === "RS256") {
      const n = typeof jwk.n === "string" ? base64UrlDecode(jwk.n) : undefined;
      if (!n || typeof jwk.e !== "string") return { skip: `RSA key without n and e${name}` };
      if (n.length < 256) return { skip: `RSA key of ${n.length * 8} bits; at least 2048${name}` };
      const key = await crypto.subtle.importKey(
        "jwk",
        { kty: "RSA", n: jwk.n as string, e: jwk.e, alg: "RS256", ext: true },
        { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
        false,
        ["verify"],
      );
      return { kid, alg, key };
    }
    if (jwk.crv !== "P-256") return { skip: `EC curve ${logSafe(jwk.crv, 16)} is not P-256${name}` };
    if (typeof jwk.x !== "string" || typeof jwk.y !== "string")
      return { skip: `EC key without x and y${name}` };
    const key = await crypto.subtle.importKey(
      "jwk",
      { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, ext: true },
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["verify"],
    );
    return { kid, alg, key };
  } catch (e) {
    return { skip: `could not import${name}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
