/**
 * XDS_AUTH on the Worker (workerd): the shared read-path suite in jwt mode (RS256 from an inline
 * XDS_JWKS, HS256 with XDS_JWT_HMAC_SECRET) over Fetch, Poll and Watch (through the MeshStore),
 * REST and StatusService; token mode; a Worker without XDS_AUTH; and the MeshStore's own fetch,
 * which serves nothing without the identity the Worker forwards.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import entry, { type Env } from "../../functions/workers/index.ts";
import { describeReadAuthSuite, nodeIn } from "../e2e/auth/read-suite.ts";
import { audience, claims, hmacSecret, issuer, jwksOf, makeKeys, sign } from "../unit/auth/tokens.ts";
import { mesh, origin, testXdsToken } from "./support.ts";

/** Far from any test clock (workerd tests may freeze Date a day ahead). */
const valid = { nbf: 1_577_836_800, exp: 4_102_444_800 };

/** The Worker answering with `vars` over the test env (a new env object builds a new app). */
const workerWith = (vars: Partial<Env>) => {
  const e: Env = { ...env, ...vars };
  return async (path: string, init: RequestInit): Promise<Response> =>
    entry.fetch(new Request(`${origin}${path}`, init), e, createExecutionContext());
};

describeReadAuthSuite("Workers", async () => {
  const keys = await makeKeys();
  const post = workerWith({
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: issuer,
    XDS_JWT_AUDIENCE: audience,
    XDS_JWKS: await jwksOf(keys),
    XDS_JWT_HMAC_SECRET: hmacSecret,
  });
  return {
    post: (path, body, headers) => post(path, { method: "POST", headers, body }),
    tokens: {
      good: await sign(keys, "RS256", claims(valid)),
      expired: await sign(keys, "HS256", claims({ ...valid, exp: 1_577_836_800 })),
      wrongAudience: await sign(keys, "ES256", claims({ ...valid, aud: ["vault"] })),
      wrongIssuer: await sign(keys, "HS256", claims({ ...valid, iss: "https://evil.example" })),
    },
  };
});

const json = { "content-type": "application/json", "connect-protocol-version": "1" };

describe("XDS_AUTH on the Worker", () => {
  it("token mode: Fetch, Poll, REST and StatusService want EDGEPILOT_XDS_TOKEN", async () => {
    const w = workerWith({ XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: testXdsToken });
    const paths = [
      "/envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters",
      "/edgepilot.xds.v1.DeltaPollService/Poll",
      "/v3/discovery:clusters",
      "/edgepilot.v1.StatusService/GetStatus",
    ];
    const body = (path: string) =>
      JSON.stringify(
        path.includes("Poll")
          ? { request: { typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster" } }
          : {},
      );
    for (const path of paths) {
      const refused = await w(path, { method: "POST", headers: json, body: body(path) });
      expect(refused.status, path).toBe(401);
      expect(await refused.text()).toContain(
        "missing credentials: send `authorization: Bearer <EDGEPILOT_XDS_TOKEN>`",
      );
      const wrong = await w(path, {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${testXdsToken}x` },
        body: body(path),
      });
      expect(wrong.status, path).toBe(401);
      const ok = await w(path, {
        method: "POST",
        headers: { ...json, authorization: `Bearer ${testXdsToken}` },
        body: body(path),
      });
      expect(ok.status, `${path}: ${await ok.clone().text()}`).toBe(200);
    }
  });

  it("a Worker without XDS_AUTH answers 500 naming it, and serves nothing", async () => {
    const w = workerWith({ XDS_AUTH: undefined });
    const res = await w("/envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters", {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(res.status).toBe(500);
    const { errors } = (await res.json()) as { errors: string[] };
    expect(errors).toEqual([
      expect.stringMatching(/^XDS_AUTH is not set: a Worker is reachable from anywhere/),
    ]);
  });

  it("XDS_AUTH=token without its secret answers 500 saying how to set it", async () => {
    const w = workerWith({ XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: undefined });
    const res = await w("/ready", { method: "GET" });
    expect(res.status).toBe(500);
    const { errors } = (await res.json()) as { errors: string[] };
    expect(errors).toEqual([
      expect.stringMatching(
        /^EDGEPILOT_XDS_TOKEN: .*\(it is not set\): `wrangler secret put EDGEPILOT_XDS_TOKEN`/,
      ),
    ]);
  });

  it("the MeshStore's fetch refuses a Poll that did not come through the Worker's authentication", async () => {
    const poll = (headers: Record<string, string>) =>
      mesh().fetch(
        new Request(`${origin}/edgepilot.xds.v1.DeltaPollService/Poll`, {
          method: "POST",
          headers: { ...json, ...headers },
          body: JSON.stringify({
            request: {
              node: nodeIn("default"),
              typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
            },
          }),
        }),
      );
    const direct = await poll({ authorization: `Bearer ${testXdsToken}` });
    expect(direct.status).toBe(401);
    expect(await direct.json()).toMatchObject({
      code: "unauthenticated",
      message: expect.stringMatching(/only through the Worker/),
    });
    // A client cannot smuggle an identity past the Worker: poll-forward.ts replaces the header.
    const w = workerWith({ XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: testXdsToken });
    const smuggled = await w("/edgepilot.xds.v1.DeltaPollService/Poll", {
      method: "POST",
      headers: {
        ...json,
        "x-edgepilot-identity": JSON.stringify({ method: "jwt", subject: "x", namespace: "kube-system" }),
      },
      body: "{}",
    });
    expect(smuggled.status).toBe(401);
  });
});
