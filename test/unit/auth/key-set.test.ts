/** JWKS from a URL: fetched on first use, refetched on an unknown kid at most once per 30s, kept when a refetch fails. */
import { beforeAll, describe, expect, it } from "vitest";
import { createKeySet, createXdsGuard, importJwks, jwksLimits } from "../../../lib/auth/index.ts";
import { audience, claims, issuer, jwksOf, makeKeys, now, sign, type TestKeys } from "./tokens.ts";

let keys: TestKeys;
beforeAll(async () => {
  keys = await makeKeys();
});

/** A guard over a URL JWKS whose document and clock the test controls; counts fetches. */
function harness(initial: string) {
  const state = { doc: initial, fetches: 0, fail: false, at: now, logs: [] as string[] };
  const keySet = createKeySet({
    url: {
      href: "https://issuer.example/openid/v1/jwks",
      fetch: async () => {
        state.fetches++;
        if (state.fail) throw new Error("HTTP 503");
        return state.doc;
      },
    },
    now: () => state.at,
    log: (l) => state.logs.push(l),
  });
  const guard = createXdsGuard(
    { mode: "jwt", issuer, audiences: [audience] },
    { keys: keySet, now: () => state.at },
  );
  return { state, auth: (t: string) => guard.authenticate(`Bearer ${t}`) };
}

describe("JWKS from a URL", () => {
  it("fetches once on first use and serves later tokens from the cache", async () => {
    const h = harness(await jwksOf(keys));
    for (let i = 0; i < 3; i++) expect((await h.auth(await sign(keys, "RS256", claims()))).ok).toBe(true);
    expect(h.state.fetches).toBe(1);
  });

  it("an unknown kid refetches at most once per 30s, then picks up a rotated key", async () => {
    const ec = JSON.parse(await jwksOf(keys)).keys[1];
    const h = harness(JSON.stringify({ keys: [ec] }));
    expect((await h.auth(await sign(keys, "ES256", claims()))).ok).toBe(true);
    const rsaToken = await sign(keys, "RS256", claims());
    for (let i = 0; i < 5; i++) {
      const r = await h.auth(rsaToken);
      expect(r.ok ? "accepted" : r.message).toMatch(
        /unknown kid "rsa-1" for RS256; the JWKS was fetched 0s ago/,
      );
    }
    expect(h.state.fetches).toBe(1); // the refetch right after the first fetch is rate-limited
    h.state.doc = await jwksOf(keys); // the issuer rotates in rsa-1
    h.state.at += 30_000;
    expect((await h.auth(rsaToken)).ok).toBe(true);
    expect(h.state.fetches).toBe(2);
  });

  it("keeps the keys it has when a refetch fails, and says so in the log", async () => {
    const h = harness(await jwksOf(keys));
    expect((await h.auth(await sign(keys, "RS256", claims()))).ok).toBe(true);
    h.state.fail = true;
    h.state.at += 301_000; // older than maxAge: refetched on use
    expect((await h.auth(await sign(keys, "ES256", claims({ exp: h.state.at / 1000 + 60 })))).ok).toBe(true);
    expect(h.state.fetches).toBe(2);
    expect(h.state.logs.join("\n")).toMatch(
      /JWKS from "https:\/\/issuer.example\/openid\/v1\/jwks" not refreshed: "HTTP 503"/,
    );
  });

  it("says the issuer could not be reached while it has no keys, and recovers once it answers", async () => {
    const h = harness(await jwksOf(keys));
    h.state.fail = true;
    const token = await sign(keys, "RS256", claims());
    const r = await h.auth(token);
    expect(r.ok ? "accepted" : r.message).toMatch(
      /no JWKS yet: fetching XDS_JWKS_URL failed \("HTTP 503"\); retried at most every 30s/,
    );
    h.state.fail = false;
    expect((await h.auth(token)).ok).toBe(false); // within 30s: not refetched
    h.state.at += 30_000;
    expect((await h.auth(token)).ok).toBe(true);
    expect(h.state.fetches).toBe(2);
  });
});

describe("importJwks", () => {
  it.each([
    ["not JSON", "{", /JWKS is not JSON/],
    ["no keys array", "{}", /"keys" array/],
    [
      "only unusable keys",
      JSON.stringify({ keys: [{ kty: "oct", k: "c2VjcmV0" }] }),
      /no RS256 or ES256 signing key \(keys\[0\]: kty "oct"/,
    ],
    [
      "too many keys",
      JSON.stringify({ keys: Array.from({ length: jwksLimits.maxKeys + 1 }, () => ({})) }),
      /at most 100/,
    ],
    ["too big", " ".repeat(jwksLimits.maxBytes + 1), /at most 262144/],
  ])("refuses %s", async (_name, doc, error) => {
    const r = await importJwks(doc);
    expect(r.ok ? "accepted" : r.error).toMatch(error);
  });

  it("skips encryption keys, other curves and short RSA keys, keeping the rest", async () => {
    const r = await importJwks(
      await jwksOf(keys, [
        { kty: "RSA", use: "enc", n: "AQAB", e: "AQAB", kid: "enc" },
        { kty: "EC", crv: "P-384", x: "AA", y: "AA", kid: "p384" },
        { kty: "RSA", n: "AQAB", e: "AQAB", kid: "short" },
      ]),
    );
    expect(r.ok && r.keys.map((k) => `${k.kid}:${k.alg}`)).toEqual(["rsa-1:RS256", "ec-1:ES256"]);
    expect(r.ok && r.skipped).toEqual([
      'keys[2]: use "enc" is not sig (kid "enc")',
      'keys[3]: EC curve "P-384" is not P-256 (kid "p384")',
      'keys[4]: RSA key of 24 bits; at least 2048 (kid "short")',
    ]);
  });
});
