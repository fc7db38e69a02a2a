/** lib/auth's guard in jwt and token mode: table-driven tokens made here with WebCrypto keys, an injected clock. */
import { beforeAll, describe, expect, it } from "vitest";
import {
  createKeySet,
  createXdsGuard,
  importJwks,
  maxTokenChars,
  type XdsGuard,
} from "../../../lib/auth/index.ts";
import {
  audience,
  claims,
  hmacSecret,
  issuer,
  jwksOf,
  makeKeys,
  now,
  type SignWith,
  sign,
  type TestKeys,
} from "./tokens.ts";

let keys: TestKeys;
let guard: XdsGuard;

beforeAll(async () => {
  keys = await makeKeys();
  const jwks = await importJwks(await jwksOf(keys));
  if (!jwks.ok) throw new Error(jwks.error);
  const keySet = createKeySet({ hmacSecret, staticKeys: jwks.keys, now: () => now });
  guard = createXdsGuard(
    { mode: "jwt", issuer, audiences: [audience, "istio-ca"], hmacSecret },
    { keys: keySet, now: () => now },
  );
});

const auth = (token: string) => guard.authenticate(`Bearer ${token}`);

interface TokenCase {
  name: string;
  alg: SignWith;
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  /** undefined: accepted as default/productpage; otherwise the refusal must match. */
  refused?: RegExp;
}

const cases: TokenCase[] = [
  { name: "RS256, kid from the JWKS", alg: "RS256" },
  { name: "ES256, kid from the JWKS", alg: "ES256" },
  { name: "HS256 with the shared secret", alg: "HS256" },
  { name: "aud as a single string", alg: "RS256", claims: { aud: audience } },
  { name: "aud array naming a second configured audience", alg: "RS256", claims: { aud: ["x", "istio-ca"] } },
  { name: "expired 30s ago: inside the 60s leeway", alg: "RS256", claims: { exp: now / 1000 - 30 } },
  {
    name: "expired an hour ago",
    alg: "RS256",
    claims: { exp: now / 1000 - 3600 },
    refused: /token expired at 2025-12-31T23:00:00.000Z \(now 2026-01-01T00:00:00.000Z\)/,
  },
  {
    name: "not valid for another hour",
    alg: "ES256",
    claims: { nbf: now / 1000 + 3600 },
    refused: /token not valid before 2026-01-01T01:00:00.000Z/,
  },
  { name: "no exp", alg: "HS256", claims: { exp: undefined }, refused: /no numeric exp/ },
  {
    name: "wrong audience",
    alg: "RS256",
    claims: { aud: ["vault"] },
    refused: /audience "vault" is not one of edgepilot, istio-ca \(XDS_JWT_AUDIENCE\)/,
  },
  { name: "no audience", alg: "RS256", claims: { aud: [] }, refused: /no audience/ },
  {
    name: "wrong issuer",
    alg: "ES256",
    claims: { iss: "https://evil.example" },
    refused: /issuer "https:\/\/evil.example" is not "https:\/\/kubernetes/,
  },
  {
    name: "signed by a key in no JWKS",
    alg: "stranger",
    refused: /bad signature.*RS256 key \(kid "rsa-1"\)/,
  },
  { name: "alg none", alg: "HS256", header: { alg: "none" }, refused: /alg none is refused/ },
  { name: "alg HS512", alg: "HS256", header: { alg: "HS512" }, refused: /alg "HS512" is not accepted/ },
  {
    name: "unknown kid",
    alg: "RS256",
    header: { kid: "rotated-away" },
    refused: /unknown kid "rotated-away" for RS256/,
  },
  { name: "crit header", alg: "RS256", header: { crit: ["exp"] }, refused: /crit/ },
  {
    name: "crit b64, which jose alone would accept",
    alg: "HS256",
    header: { crit: ["b64"], b64: true },
    refused: /^invalid token: the header has crit extensions, which are not supported$/,
  },
  { name: "kid not a string", alg: "RS256", header: { kid: 7 }, refused: /kid is not a string/ },
  {
    name: "not valid for another 30s: inside the 60s leeway",
    alg: "ES256",
    claims: { nbf: now / 1000 + 30 },
  },
  {
    name: "expired 61s ago: outside the leeway",
    alg: "HS256",
    claims: { exp: now / 1000 - 61 },
    refused: /token expired at 2025-12-31T23:58:59.000Z/,
  },
  { name: "nbf not a number", alg: "RS256", claims: { nbf: "soon" }, refused: /nbf is not a number/ },
  {
    name: "iat not a number",
    alg: "RS256",
    claims: { iat: "today" },
    refused: /claim "iat": .*must be a number/,
  },
  {
    name: "no issuer",
    alg: "HS256",
    claims: { iss: undefined },
    refused: /issuer "\(none\)" is not "https:\/\/kubernetes/,
  },
  { name: "aud neither string nor array", alg: "RS256", claims: { aud: 7 }, refused: /no audience/ },
  {
    name: "no namespace (a user token)",
    alg: "RS256",
    claims: { sub: "alice", "kubernetes.io": undefined },
    refused: /names no namespace/,
  },
  {
    name: "sub and kubernetes.io disagree",
    alg: "RS256",
    claims: { sub: "system:serviceaccount:kube-system:admin" },
    refused: /different service accounts/,
  },
];

describe("jwt mode: verifying tokens", () => {
  it.each(cases)("$name", async (c) => {
    const token = await sign(keys, c.alg, claims(c.claims), c.header);
    const result = await auth(token);
    if (!c.refused) {
      expect(result).toEqual({
        ok: true,
        identity: {
          method: "jwt",
          subject: "system:serviceaccount:default:productpage",
          namespace: "default",
          serviceAccount: "productpage",
        },
      });
      return;
    }
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toMatch(c.refused);
      expect(result.message).not.toContain(token.split(".")[2]); // never echoes the token
    }
  });

  it("takes the namespace from sub when the token has no kubernetes.io claim (legacy tokens)", async () => {
    const token = await sign(
      keys,
      "HS256",
      claims({ "kubernetes.io": undefined, sub: "system:serviceaccount:shop:cart" }),
    );
    const r = await auth(token);
    expect(r.ok && r.identity).toMatchObject({ namespace: "shop", serviceAccount: "cart" });
  });

  it("refuses a token whose payload was changed after signing", async () => {
    const token = await sign(keys, "RS256", claims());
    const [h, , s] = token.split(".");
    const forged = Buffer.from(
      JSON.stringify(claims({ "kubernetes.io": { namespace: "kube-system" } })),
    ).toString("base64url");
    const r = await auth(`${h}.${forged}.${s}`);
    expect(r.ok ? "accepted" : r.message).toMatch(/bad signature/);
  });

  it.each([
    ["a bare word", "abc", /3 dot-separated parts, this one 1/],
    ["two parts", "a.b", /this one 2/],
    ["a header that is not base64url JSON", "!!.e30.sig", /header is not base64url JSON/],
    ["a header without alg", `${Buffer.from("{}").toString("base64url")}.e30.c2ln`, /no alg/],
    ["a token over the size limit", "x".repeat(maxTokenChars + 1), /at most 8192/],
  ])("refuses a malformed token: %s", async (_name, token, refused) => {
    const r = await auth(token);
    expect(r.ok ? "accepted" : r.message).toMatch(refused);
  });

  it("refuses a signature that is not base64url, and a signed payload that is not a JSON object", async () => {
    const [h, p] = (await sign(keys, "HS256", claims())).split(".");
    const r = await auth(`${h}.${p}.not*base64url`);
    expect(r.ok ? "accepted" : r.message).toBe(
      "invalid token: malformed token: the signature is not base64url",
    );
    const array = await sign(keys, "HS256", [claims()] as unknown as Record<string, unknown>);
    const a = await auth(array);
    expect(a.ok ? "accepted" : a.message).toBe(
      "invalid token: malformed token: the payload is not base64url JSON",
    );
  });

  it.each([
    [
      undefined,
      /missing credentials: send `authorization: Bearer <service-account JWT>` whose audience is edgepilot or istio-ca/,
    ],
    ["Basic dXNlcjpwYXNz", /missing credentials/],
    ["Bearer", /missing credentials/],
  ])("without a bearer token (%s) says what to send", async (header, refused) => {
    const r = await guard.authenticate(header);
    expect(r.ok ? "accepted" : r.message).toMatch(refused);
  });
});

describe("token mode", () => {
  const tokenGuard = createXdsGuard({ mode: "token", token: "s3cret-xds-token-0001" }, { now: () => now });

  it.each([
    ["Bearer s3cret-xds-token-0001", true, ""],
    ["bearer s3cret-xds-token-0001", true, ""],
    [
      "Bearer s3cret-xds-token-0002",
      false,
      "wrong bearer token: it is not EDGEPILOT_XDS_TOKEN (XDS_AUTH=token)",
    ],
    ["Bearer s3cret-xds-token-000", false, "wrong bearer token"],
    [
      undefined,
      false,
      "missing credentials: send `authorization: Bearer <EDGEPILOT_XDS_TOKEN>` (XDS_AUTH=token)",
    ],
  ])("%s ▶ accepted: %s", async (header, accepted, message) => {
    const r = await tokenGuard.authenticate(header);
    expect(r.ok).toBe(accepted);
    if (!r.ok) expect(r.message).toContain(message);
  });

  it("none mode accepts anyone, with or without a header", async () => {
    const none = createXdsGuard({ mode: "none", explicit: true }, { now: () => now });
    expect(await none.authenticate(undefined)).toMatchObject({ ok: true, identity: { method: "none" } });
    expect(await none.authenticate("Bearer whatever")).toMatchObject({ ok: true });
  });
});
