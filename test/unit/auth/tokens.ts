/** Builders for auth tests: WebCrypto keys made in the test, JWKS documents, and signed JWTs. */
import { base64url } from "jose";

export const issuer = "https://kubernetes.default.svc.cluster.local";
export const audience = "edgepilot";
export const hmacSecret = "a-shared-hmac-secret-of-32-chars!";
/** The injected clock: 2026-01-01T00:00:00Z. */
export const now = Date.UTC(2026, 0, 1);

export interface TestKeys {
  rsa: CryptoKeyPair;
  ec: CryptoKeyPair;
  /** A second RSA pair whose public key is in no JWKS. */
  stranger: CryptoKeyPair;
  hmac: CryptoKey;
}

/** Generates every key the tests sign with (RSA 2048, P-256, HMAC-SHA256). */
export async function makeKeys(): Promise<TestKeys> {
  const rsaParams = {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  };
  const [rsa, stranger, ec] = await Promise.all([
    crypto.subtle.generateKey(rsaParams, true, ["sign", "verify"]) as Promise<CryptoKeyPair>,
    crypto.subtle.generateKey(rsaParams, true, ["sign", "verify"]) as Promise<CryptoKeyPair>,
    crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ]) as Promise<CryptoKeyPair>,
  ]);
  const hmac = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(hmacSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return { rsa, ec, stranger, hmac };
}

/** A JWKS with the RSA key as kid "rsa-1" and the EC key as kid "ec-1" (public parts only). */
export async function jwksOf(keys: TestKeys, extra: object[] = []): Promise<string> {
  const rsa = (await crypto.subtle.exportKey("jwk", keys.rsa.publicKey)) as JsonWebKey;
  const ec = (await crypto.subtle.exportKey("jwk", keys.ec.publicKey)) as JsonWebKey;
  return JSON.stringify({
    keys: [
      { kty: "RSA", n: rsa.n, e: rsa.e, kid: "rsa-1", alg: "RS256", use: "sig" },
      { kty: "EC", crv: "P-256", x: ec.x, y: ec.y, kid: "ec-1", use: "sig" },
      ...extra,
    ],
  });
}

/** Claims of a bound service-account token for default/productpage, valid around `now`, with overrides. */
export function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: issuer,
    aud: [audience],
    sub: "system:serviceaccount:default:productpage",
    iat: now / 1000 - 60,
    nbf: now / 1000 - 60,
    exp: now / 1000 + 3600,
    "kubernetes.io": { namespace: "default", serviceaccount: { name: "productpage", uid: "u-1" } },
    ...overrides,
  };
}

export type SignWith = "RS256" | "ES256" | "HS256" | "stranger";

/** A compact JWS of `payload`, signed with the named key; `header` overrides the protected header. */
export async function sign(
  keys: TestKeys,
  alg: SignWith,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const enc = (v: unknown) => base64url.encode(new TextEncoder().encode(JSON.stringify(v)));
  const jwsAlg = alg === "stranger" ? "RS256" : alg;
  const kid = alg === "RS256" || alg === "stranger" ? "rsa-1" : alg === "ES256" ? "ec-1" : undefined;
  const h = enc({ alg: jwsAlg, typ: "JWT", ...(kid && { kid }), ...header });
  const input = `${h}.${enc(payload)}`;
  const data = new TextEncoder().encode(input);
  const sig =
    alg === "HS256"
      ? await crypto.subtle.sign("HMAC", keys.hmac, data)
      : alg === "ES256"
        ? await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.ec.privateKey, data)
        : await crypto.subtle.sign(
            "RSASSA-PKCS1-v1_5",
            (alg === "stranger" ? keys.stranger : keys.rsa).privateKey,
            data,
          );
  return `${input}.${base64url.encode(new Uint8Array(sig))}`;
}
