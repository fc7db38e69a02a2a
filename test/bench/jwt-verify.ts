/**
 * Tokens verified per second by the XDS_AUTH=jwt guard (lib/auth), the check every unary xDS read
 * (Fetch, Poll, REST) and every ADS stream makes: RS256 and ES256 from a static JWKS and HS256
 * with a shared secret, each beside its floor, WebCrypto's verify of the same signature alone.
 * Tokens are Kubernetes-shaped (bound service-account claims, ~800 bytes); the clock is injected.
 * Run alone: `npx tsx test/bench/jwt-verify.ts [tokens per round]`.
 */
import { createKeySet, createXdsGuard, importJwks } from "../../lib/auth/index.ts";
import { audience, claims, hmacSecret, issuer, jwksOf, makeKeys, now, sign } from "../unit/auth/tokens.ts";

/** One algorithm's rate and CPU per token through the guard and through WebCrypto's verify alone. */
export interface JwtVerifyRow {
  alg: "RS256" | "ES256" | "HS256";
  tokensPerSecond: number;
  /** Process CPU (every thread: WebCrypto runs off the main thread), steadier than the rate on a busy machine. */
  cpuUsPerToken: number;
  floorPerSecond: number;
  floorCpuUs: number;
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
    const guarded = { rate: [] as number[], cpu: [] as number[] };
    const floor = { rate: [] as number[], cpu: [] as number[] };
    const round = async (into: typeof floor, run: () => Promise<unknown>) => {
      const cpu = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < perRound; i++) await run();
      const used = process.cpuUsage(cpu);
      into.rate.push(perRound / ((performance.now() - t) / 1000));
      into.cpu.push((used.user + used.system) / perRound);
    };
    for (let r = 0; r < rounds; r++) {
      await round(guarded, () => guard.authenticate(header));
      await round(floor, () => crypto.subtle.verify(verifyParams[alg], verifyKey[alg], signature, signed));
    }
    rows.push({
      alg,
      tokensPerSecond: median(guarded.rate),
      cpuUsPerToken: median(guarded.cpu),
      floorPerSecond: median(floor.rate),
      floorCpuUs: median(floor.cpu),
    });
  }
  return rows;
}

/** Prints the table `npm run bench` shows. */
export function printJwtVerify(rows: JwtVerifyRow[]): void {
  const pad = (v: string | number, n: number) => String(v).padStart(n);
  console.log(
    "alg   | tokens/s (guard.authenticate) | CPU µs/token | floor: WebCrypto verify/s | floor CPU µs | guard CPU - floor µs",
  );
  for (const r of rows)
    console.log(
      `${r.alg} | ${pad(r.tokensPerSecond.toFixed(0), 29)} | ${pad(r.cpuUsPerToken.toFixed(1), 12)} | ${pad(r.floorPerSecond.toFixed(0), 25)} | ${pad(r.floorCpuUs.toFixed(1), 12)} | ${pad((r.cpuUsPerToken - r.floorCpuUs).toFixed(1), 20)}`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printJwtVerify(await measureJwtVerify(Number(process.argv[2] ?? 2000)));
}
