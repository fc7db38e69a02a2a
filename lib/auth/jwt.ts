/**
 * Verification of compact JWS JSON Web Tokens as a Kubernetes API server issues them to service
 * accounts (RFC 7515, 7519): signature first (only configured algorithms; never `none`), then
 * issuer, audience and the validity window with a small leeway, against an injected clock.
 * Errors say what is wrong (expired at …, audience …, unknown kid …) and never echo the token.
 */
import { logSafe } from "../log-safe.ts";
import { base64UrlDecode } from "./base64url.ts";
import type { JwsAlg } from "./jwks.ts";

/** The longest token accepted (characters); a Kubernetes service-account token is ~1 KiB. */
export const maxTokenChars = 8192;

/** Clock skew tolerated on exp and nbf (ms), as go-jose's DefaultLeeway that Kubernetes uses. */
export const defaultLeewayMs = 60_000;

/** The protected header fields edgepilot reads. */
export interface JwsHeader {
  alg: string;
  kid: string | undefined;
}

/** Claims of a verified token (registered ones typed, the rest as JSON). */
export type JwtClaims = Record<string, unknown> & {
  iss?: unknown;
  sub?: unknown;
  aud?: unknown;
  exp?: unknown;
  nbf?: unknown;
};

/** What a token must satisfy. */
export interface JwtPolicy {
  issuer: string;
  /** The token's aud (a string or an array) must contain at least one of these. */
  audiences: readonly string[];
  /** Algorithms with a configured key source; anything else is refused before any key lookup. */
  algorithms: ReadonlySet<JwsAlg>;
  leewayMs?: number;
}

/** WebCrypto verify parameters of one JWS algorithm. */
export type VerifyParams = { name: string; hash?: string };

/** Finds the key for a token's header, or says why there is none (unknown kid, …). */
export type KeyResolver = (
  header: JwsHeader,
) => Promise<{ ok: true; key: CryptoKey; params: VerifyParams } | { ok: false; error: string }>;

/** The verified claims, or what is wrong with the token (safe to show the caller). */
export type JwtResult = { ok: true; claims: JwtClaims } | { ok: false; error: string };

/** Verifies `token` at time `nowMs`; the claims only when every check passed. */
export async function verifyJwt(
  token: string,
  policy: JwtPolicy,
  resolveKey: KeyResolver,
  nowMs: number,
): Promise<JwtResult> {
  const fail = (error: string): JwtResult => ({ ok: false, error });
  if (token.length > maxTokenChars)
    return fail(`token is ${token.length} characters; at most ${maxTokenChars}`);
  const parts = token.split(".");
  if (parts.length !== 3)
    return fail(`malformed token: a JWS has 3 dot-separated parts, this one ${parts.length}`);
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h);
  if (!header) return fail("malformed token: the header is not base64url JSON");
  const alg = header.alg;
  if (typeof alg !== "string") return fail("malformed token: the header has no alg");
  if (alg.toLowerCase() === "none") return fail("alg none is refused: the token must be signed");
  if (!policy.algorithms.has(alg as JwsAlg))
    return fail(`alg ${logSafe(alg, 16)} is not accepted (configured: ${[...policy.algorithms].join(", ")})`);
  if (header.crit !== undefined) return fail("the header has crit extensions, which are not supported");
  if (header.kid !== undefined && typeof header.kid !== "string")
    return fail("malformed token: kid is not a string");
  const signature = base64UrlDecode(s);
  if (!signature) return fail("malformed token: the signature is not base64url");
  const key = await resolveKey({ alg, kid: header.kid as string | undefined });
  if (!key.ok) return fail(key.error);
  const signed = new TextEncoder().encode(`${h}.${p}`);
  let valid = false;
  try {
    valid = await crypto.subtle.verify(key.params, key.key, signature, signed);
  } catch {
    valid = false;
  }
  if (!valid)
    return fail(`bad signature: the token does not verify with the ${alg} key${kidText(header.kid)}`);
  const claims = decodeJson(p);
  if (!claims) return fail("malformed token: the payload is not base64url JSON");
  return checkClaims(claims, policy, nowMs);
}

/** The registered-claim checks, after the signature verified. */
export function checkClaims(claims: JwtClaims, policy: JwtPolicy, nowMs: number): JwtResult {
  const fail = (error: string): JwtResult => ({ ok: false, error });
  const leeway = policy.leewayMs ?? defaultLeewayMs;
  if (claims.iss !== policy.issuer)
    return fail(
      `issuer ${logSafe(claims.iss ?? "(none)", 128)} is not ${logSafe(policy.issuer, 128)} (XDS_JWT_ISSUER)`,
    );
  const aud = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
  if (!Array.isArray(aud) || aud.length === 0)
    return fail(
      `the token has no audience; expected one of ${policy.audiences.join(", ")} (XDS_JWT_AUDIENCE)`,
    );
  if (!aud.some((a) => typeof a === "string" && policy.audiences.includes(a)))
    return fail(
      `audience ${logSafe(aud.join(", "), 256)} is not one of ${policy.audiences.join(", ")} (XDS_JWT_AUDIENCE)`,
    );
  if (typeof claims.exp !== "number" || !Number.isFinite(claims.exp))
    return fail("the token has no numeric exp: tokens without an expiry are refused");
  if (claims.exp * 1000 + leeway <= nowMs)
    return fail(`token expired at ${iso(claims.exp)} (now ${iso(nowMs / 1000)})`);
  if (claims.nbf !== undefined) {
    if (typeof claims.nbf !== "number" || !Number.isFinite(claims.nbf)) return fail("nbf is not a number");
    if (claims.nbf * 1000 - leeway > nowMs)
      return fail(`token not valid before ${iso(claims.nbf)} (now ${iso(nowMs / 1000)})`);
  }
  return { ok: true, claims };
}

function decodeJson(segment: string): Record<string, unknown> | undefined {
  const bytes = base64UrlDecode(segment);
  if (!bytes) return undefined;
  try {
    const v: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function iso(seconds: number): string {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? String(seconds) : d.toISOString();
}

/** " (kid "…")" for messages, or nothing. */
export function kidText(kid: unknown): string {
  return typeof kid === "string" ? ` (kid ${logSafe(kid, 64)})` : "";
}
