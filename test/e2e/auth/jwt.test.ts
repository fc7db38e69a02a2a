/**
 * XDS_AUTH=jwt on the Node runtime (the real child process): RS256 keys from XDS_JWKS_FILE and
 * ES256 keys from XDS_JWKS_URL (a real local HTTP server). ADS SotW and Delta with a real
 * @grpc/grpc-js client passing metadata; Fetch, Poll, Watch, StatusService over h2c and REST on
 * PORT through the shared suite.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claims, jwksOf, makeKeys, type SignWith, sign, type TestKeys } from "../../unit/auth/tokens.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { adsFirst, h2cPost } from "./clients.ts";
import { describeReadAuthSuite, nodeIn } from "./read-suite.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
let cp: RunningControlPlane;
let keys: TestKeys;
let jwksServer: Server;
let jwksFetches = 0;

/** A token for default/productpage valid now (real clock: the child process has its own). */
const mint = (alg: SignWith, overrides: Record<string, unknown> = {}) => {
  const t = Math.floor(Date.now() / 1000);
  return sign(keys, alg, claims({ iat: t, nbf: t - 5, exp: t + 600, ...overrides }));
};

beforeAll(async () => {
  keys = await makeKeys();
  const { keys: both } = JSON.parse(await jwksOf(keys)) as { keys: object[] };
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-auth-"));
  writeFileSync(join(dir, "jwks.json"), JSON.stringify({ keys: [both[0]] })); // RS256 from the file
  jwksServer = createServer((_req, res) => {
    jwksFetches++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: [both[1]] })); // ES256 from the URL
  });
  await new Promise<void>((r) => jwksServer.listen(0, "127.0.0.1", r));
  cp = await startControlPlane({
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: claims().iss as string,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS_FILE: join(dir, "jwks.json"),
    XDS_JWKS_URL: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/openid/v1/jwks`,
  });
});
afterAll(async () => {
  await cp?.stop();
  jwksServer?.close();
});

describeReadAuthSuite("Node", async () => ({
  post: (path, body, headers) =>
    path.startsWith("/v3/")
      ? fetch(`http://127.0.0.1:${cp.port}${path}`, { method: "POST", headers, body })
      : h2cPost(cp.xdsPort, path, body, headers),
  tokens: {
    good: await mint("RS256"),
    expired: await mint("RS256", { exp: Math.floor(Date.now() / 1000) - 3600 }),
    wrongAudience: await mint("RS256", { aud: ["vault"] }),
    wrongIssuer: await mint("RS256", { iss: "https://evil.example" }),
  },
}));

describe("ADS with XDS_AUTH=jwt (@grpc/grpc-js, metadata)", () => {
  it("says how reads are authenticated at start-up", () => {
    expect(cp.output()).toMatch(
      /XDS_AUTH=jwt: every xDS read needs a service-account JWT from .* for edgepilot/,
    );
  });

  const own = nodeIn("default");
  const cases: [string, () => Promise<string | undefined>, object, boolean, RegExp | string][] = [
    ["a good RS256 token (file JWKS), SotW", () => mint("RS256"), { node: own, typeUrl: CDS }, false, CDS],
    ["a good ES256 token (URL JWKS), SotW", () => mint("ES256"), { node: own, typeUrl: CDS }, false, CDS],
    ["a good token, Delta", () => mint("ES256"), { node: own, typeUrl: CDS }, true, CDS],
    ["no token", async () => undefined, { node: own, typeUrl: CDS }, false, /^16 missing credentials/],
    [
      "a wrong token",
      async () => "not.a.token",
      { node: own, typeUrl: CDS },
      true,
      /^16 invalid token: malformed token: the header/,
    ],
    [
      "an expired token",
      () => mint("RS256", { exp: Math.floor(Date.now() / 1000) - 3600 }),
      { node: own, typeUrl: CDS },
      false,
      /^16 invalid token: token expired at/,
    ],
    [
      "a token for another audience",
      () => mint("ES256", { aud: "vault" }),
      { node: own, typeUrl: CDS },
      true,
      /^16 invalid token: audience "vault"/,
    ],
    [
      "a token signed by an unknown key",
      () => mint("stranger"),
      { node: own, typeUrl: CDS },
      false,
      /^16 invalid token: bad signature/,
    ],
    [
      "a node of another namespace, SotW",
      () => mint("RS256"),
      { node: nodeIn("kube-system"), typeUrl: CDS },
      false,
      /^7 authorization failed: node ".*kube-system.*" claims/,
    ],
    [
      "a node of another namespace, Delta",
      () => mint("RS256"),
      { node: nodeIn("istio-system"), typeUrl: CDS },
      true,
      /^7 authorization failed/,
    ],
    [
      "no node on the first request",
      () => mint("RS256"),
      { typeUrl: CDS },
      false,
      /^3 missing node information/,
    ],
    [
      "no node on the first request, Delta",
      () => mint("RS256"),
      { typeUrl: CDS },
      true,
      /^3 missing node information/,
    ],
  ];
  it.each(cases)("%s", async (_name, token, first, delta, expected) => {
    const outcome = await adsFirst(cp.xdsPort, await token(), first, delta);
    const got = "served" in outcome ? outcome.served : `${outcome.code} ${outcome.details}`;
    if (typeof expected === "string") expect(got).toBe(expected);
    else expect(got).toMatch(expected);
  });

  it("a later request naming another namespace ends the stream (PermissionDenied), and is logged escaped", async () => {
    const t = await mint("RS256");
    const foreign = { id: "sidecar~10.1.0.9~x.kube-system~kube-system.svc.cluster.local\nforged" };
    const o = await adsFirst(cp.xdsPort, t, { node: own, typeUrl: CDS }, false, {
      node: foreign,
      typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
    });
    expect(o).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    for (let i = 0; i < 50 && !cp.output().includes("forged"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(cp.output()).toContain(
      'xds: refused StreamAggregatedResources: authorization failed: node "sidecar~10.1.0.9~x.kube-system~kube-system.svc.cluster.local\\nforged"',
    );
  });

  it("fetched the URL JWKS once for all those ES256 tokens (cached)", () => {
    expect(jwksFetches).toBe(1);
  });

  it("a refused stream does not disturb a served one", async () => {
    const [bad, good] = await Promise.all([
      adsFirst(cp.xdsPort, undefined, { node: own, typeUrl: CDS }),
      adsFirst(cp.xdsPort, await mint("RS256"), { node: own, typeUrl: CDS }),
    ]);
    expect(bad).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(good).toEqual({ served: CDS });
  });
});
