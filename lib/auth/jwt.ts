/**
 * Verification of compact JWS JSON Web Tokens as a Kubernetes API server issues them to service
 * accounts (RFC 7515, 7519), by jose's jwtVerify: signature first (only configured algorithms;
 * never `none`), then issuer, audience and the validity window with a small leeway, against an
 * injected clock. What stays ours: the size bound (jose has none), the key lookup (key-set.ts) and
 * the errors, which say what is wrong (expired at …, audience …, unknown kid …) and never echo
 * the token.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from "jose";
import { logSafe } from "../log-safe.ts";
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

/** Finds the key for a token's header, or says why there is none (unknown kid, …). */
export type KeyResolver = (
  header: JwsHeader,
) => Promise<{ ok: true; key: CryptoKey } | { ok: false; error: string }>;

/** The verified claims, or what is wrong with the token (safe to show the caller). */
export type JwtResult = { ok: true; claims: JwtClaims } | { ok: false; error: string };

/** A refusal decided by us inside jose's key callback; its message is already the answer. */
class Refused extends Error {}

const critRefused = "the header has crit extensions, which are not supported";

/** Verifies `token` at time `nowMs`; the claims only when every check passed. */
export async function verifyJwt(
  token: string,
  policy: JwtPolicy,
  resolveKey: KeyResolver,
  nowMs: number,
): Promise<JwtResult> {
  if (token.length > maxTokenChars)
    return { ok: false, error: `token is ${token.length} characters; at most ${maxTokenChars}` };
  let used: JwsHeader | undefined;
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        // jose accepts crit ["b64"] with b64 true; we support no extension at all.
        if (header.crit !== undefined) throw new Refused(critRefused);
        const kid: unknown = header.kid;
        if (kid !== undefined && typeof kid !== "string")
          throw new Refused("malformed token: kid is not a string");
        used = { alg: header.alg as string, kid };
        const found = await resolveKey(used);
        if (!found.ok) throw new Refused(found.error);
        return found.key;
      },
      {
        algorithms: [...policy.algorithms],
        issuer: policy.issuer,
        audience: [...policy.audiences],
        requiredClaims: ["exp"],
        clockTolerance: (policy.leewayMs ?? defaultLeewayMs) / 1000,
        currentDate: new Date(nowMs),
      },
    );
    return { ok: true, claims: payload };
  } catch (e) {
    return { ok: false, error: explain(e, token, policy, used, nowMs) };
  }
}

/** What jose's error means for this token, in words that name the problem and not the token. */
function explain(e: unknown, token: string, policy: JwtPolicy, used: JwsHeader | undefined, nowMs: number) {
  if (e instanceof Refused) return e.message;
  if (e instanceof errors.JWSSignatureVerificationFailed)
    return `bad signature: the token does not verify with the ${used?.alg} key${kidText(used?.kid)}`;
  if (e instanceof errors.JWTClaimValidationFailed || e instanceof errors.JWTExpired)
    return claimError(e.claim, e.payload, e.message, policy, nowMs);
  return malformed(token, policy) ?? `malformed token: ${e instanceof Error ? e.message : String(e)}`;
}

/** The refusal of a signed token's claim `claim`. */
function claimError(
  claim: string,
  claims: JwtClaims,
  joseMessage: string,
  policy: JwtPolicy,
  nowMs: number,
): string {
  switch (claim) {
    case "iss":
      return `issuer ${logSafe(claims.iss ?? "(none)", 128)} is not ${logSafe(policy.issuer, 128)} (XDS_JWT_ISSUER)`;
    case "aud": {
      const aud = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
      if (!Array.isArray(aud) || aud.length === 0)
        return `the token has no audience; expected one of ${policy.audiences.join(", ")} (XDS_JWT_AUDIENCE)`;
      return `audience ${logSafe(aud.join(", "), 256)} is not one of ${policy.audiences.join(", ")} (XDS_JWT_AUDIENCE)`;
    }
    case "exp":
      return typeof claims.exp === "number"
        ? `token expired at ${iso(claims.exp)} (now ${iso(nowMs / 1000)})`
        : "the token has no numeric exp: tokens without an expiry are refused";
    case "nbf":
      return typeof claims.nbf === "number"
        ? `token not valid before ${iso(claims.nbf)} (now ${iso(nowMs / 1000)})`
        : "nbf is not a number";
    default:
      return `claim ${logSafe(claim, 16)}: ${joseMessage}`;
  }
}

/**
 * Which part of a token jose could not read, checked in the order a reader meets them; undefined
 * when every part reads (jose's own message then says what failed).
 */
function malformed(token: string, policy: JwtPolicy): string | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return `malformed token: a JWS has 3 dot-separated parts, this one ${parts.length}`;
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return "malformed token: the header is not base64url JSON";
  }
  const alg = header.alg;
  if (typeof alg !== "string" || alg === "") return "malformed token: the header has no alg";
  if (alg.toLowerCase() === "none") return "alg none is refused: the token must be signed";
  if (!policy.algorithms.has(alg as JwsAlg))
    return `alg ${logSafe(alg, 16)} is not accepted (configured: ${[...policy.algorithms].join(", ")})`;
  if (header.crit !== undefined) return critRefused;
  if (!/^[A-Za-z0-9_-]*$/.test(parts[2] ?? "")) return "malformed token: the signature is not base64url";
  try {
    decodeJwt(token);
  } catch {
    return "malformed token: the payload is not base64url JSON";
  }
  return undefined;
}

function iso(seconds: number): string {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? String(seconds) : d.toISOString();
}

/** " (kid "…")" for messages, or nothing. */
export function kidText(kid: unknown): string {
  return typeof kid === "string" ? ` (kid ${logSafe(kid, 64)})` : "";
}
