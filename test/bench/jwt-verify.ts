/**
 * Tokens verified per second by the XDS_AUTH=jwt guard (lib/auth), the check every unary xDS read
 * (Fetch, Poll, REST) and every ADS stream makes: RS256 and ES256 from a static JWKS and HS256
 * with a shared secret, each beside its floor, WebCrypto's verify of the same signature alone.
 * Tokens are Kubernetes-shaped (bound service-account claims, ~800 bytes); the clock is injected.
 * Run alone: `npx tsx test/bench/jwt-verify.ts [tokens per round]`.
 */
import { createKeySet, createXdsGuard, importJwks } from "../../lib/auth/index.ts";
import { audience, claims, hmacSecret, issuer, jwksOf, makeKeys, now, sign } from "../unit/auth/tokens.ts";

/** One algorithm's rate through the guard and through WebCrypto's verify alone. */
export interface JwtVerifyRow {
  alg: "RS256" | "ES256" | "HS256";
  tokensPerSecond: number;
  floorPerSecond: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const verifyParams = {
  RS256: { name: "RSASSA-PKCS1-v1_5" },
  ES256: { name: "ECDSA", hash: "SHA-256" },
  HS256: { name: "HMAC" },
} as const;

/** Median rate over `rounds` rounds of `perRound` verifications, guard and floor alternating. */
export async function measureJwtVerify(perRound = 2000, rounds = 7): Promise<JwtVerifyRow[]> {
  const keys = await makeKeys();
  const jwks = await importJwks(await jwksOf(keys));
  if (!jwks.ok) throw new Error(jwks.error);
  const keySet = createKeySet({ hmacSecret, staticKeys: jwks.keys, now: () => now });
  const guard = createXdsGuard(
    { mode: "jwt", issuer, audiences: [audience], hmacSecret },
    { keys: keySet, now: () => now },
  );
  const hmacVerify = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(hmacSecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const verifyKey = { RS256: keys.rsa.publicKey, ES256: keys.ec.publicKey, HS256: hmacVerify };
  const rows: JwtVerifyRow[] = [];
  for (const alg of ["RS256", "ES256", "HS256"] as const) {
    const token = await sign(keys, alg, claims());
    const header = `Bearer ${token}`;
    const dot = token.lastIndexOf(".");
    const signed = new TextEncoder().encode(token.slice(0, dot));
    const signature = Buffer.from(token.slice(dot + 1), "base64url");
    const first = await guard.authenticate(header);
    if (!first.ok) throw new Error(`${alg}: ${first.message}`);
    const rate: number[] = [];
    const floor: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      for (let i = 0; i < perRound; i++) await guard.authenticate(header);
      rate.push(perRound / ((performance.now() - t) / 1000));
      t = performance.now();
      for (let i = 0; i < perRound; i++)
        await crypto.subtle.verify(verifyParams[alg], verifyKey[alg], signature, signed);
      floor.push(perRound / ((performance.now() - t) / 1000));
    }
    rows.push({ alg, tokensPerSecond: median(rate), floorPerSecond: median(floor) });
  }
  return rows;
}

/** Prints the table `npm run bench` shows. */
export function printJwtVerify(rows: JwtVerifyRow[]): void {
  const pad = (v: string | number, n: number) => String(v).padStart(n);
  console.log("alg   | tokens/s (guard.authenticate) | floor: WebCrypto verify/s | guard / floor");
  for (const r of rows)
    console.log(
      `${r.alg} | ${pad(r.tokensPerSecond.toFixed(0), 29)} | ${pad(r.floorPerSecond.toFixed(0), 25)} | ${pad((r.tokensPerSecond / r.floorPerSecond).toFixed(2), 13)}`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printJwtVerify(await measureJwtVerify(Number(process.argv[2] ?? 2000)));
}
