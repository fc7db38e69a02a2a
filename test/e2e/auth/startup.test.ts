/**
 * XDS_AUTH's start-up rules on the real Node process, and XDS_AUTH=token end to end: a static
 * bearer token in gRPC metadata (ADS) and in the Authorization header (REST, Connect).
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { adsFirst, h2cPost } from "./clients.ts";
import { nodeIn } from "./read-suite.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

describe("start-up stops with a line naming what to set", () => {
  it.each([
    [
      "EDGEPILOT_TOKEN without HOST (0.0.0.0 by default) and without XDS_AUTH",
      { HOST: "" },
      /HOST defaults to 0.0.0.0 because EDGEPILOT_TOKEN is set.*set HOST=127.0.0.1 to keep both ports on loopback/,
    ],
    [
      "XDS_JWKS_FILE that does not exist",
      {
        XDS_AUTH: "jwt",
        XDS_JWT_ISSUER: "i",
        XDS_JWT_AUDIENCE: "a",
        XDS_JWKS_FILE: "/nonexistent/jwks.json",
      },
      /edgepilot: cannot start: XDS_JWKS_FILE: cannot read "\/nonexistent\/jwks.json"/,
    ],
  ])("%s", async (_name, env, line) => {
    const started = startControlPlane(env);
    await expect(started).rejects.toThrow(/control plane exited 2/);
    await expect(started).rejects.toThrow(line);
  });
});

describe("XDS_AUTH=token", () => {
  const token = "e2e-xds-token-0123456789";
  let cp: RunningControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: token });
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it("logs the mode at start-up", () => {
    expect(cp.output()).toMatch(
      /XDS_AUTH=token: every xDS read needs `authorization: Bearer <EDGEPILOT_XDS_TOKEN>`/,
    );
  });

  it.each([
    ["the token", token, nodeIn("default"), CDS],
    ["the token, any namespace (a shared token names none)", token, nodeIn("kube-system"), CDS],
    [
      "no token",
      undefined,
      nodeIn("default"),
      /^16 missing credentials: send `authorization: Bearer <EDGEPILOT_XDS_TOKEN>`/,
    ],
    ["the ingest token instead", "e2e-token", nodeIn("default"), /^16 wrong bearer token/],
  ])("ADS with %s", async (_name, t, node, expected) => {
    const o = await adsFirst(cp.xdsPort, t, { node, typeUrl: CDS });
    const got = "served" in o ? o.served : `${o.code} ${o.details}`;
    if (typeof expected === "string") expect(got).toBe(expected);
    else expect(got).toMatch(expected);
  });

  it("a unary read without a node is served (token mode names no namespace to check)", async () => {
    const res = await h2cPost(
      cp.xdsPort,
      "/envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters",
      "{}",
      {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        authorization: `Bearer ${token}`,
      },
    );
    expect(res.status).toBe(200);
  });

  it("REST: 401 without the token, with a WWW-Authenticate challenge; 200 with it", async () => {
    const rest = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${cp.port}/v3/discovery:clusters`, { method: "POST", headers, body: "{}" });
    const refused = await rest({});
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await refused.json()).toEqual({
      error: "missing credentials: send `authorization: Bearer <EDGEPILOT_XDS_TOKEN>` (XDS_AUTH=token)",
    });
    expect((await rest({ authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("Poll on PORT (HTTP/1.1 Connect): 401 without the token, 200 with it", async () => {
    const poll = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${cp.port}/edgepilot.xds.v1.DeltaPollService/Poll`, {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers },
        body: JSON.stringify({ request: { typeUrl: CDS } }),
      });
    const refused = await poll({});
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: "unauthenticated" });
    expect((await poll({ authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("the first ADS request without a node is refused whatever the mode (istiod: missing node information)", async () => {
    const o = await adsFirst(cp.xdsPort, token, { typeUrl: CDS });
    expect(o).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });
});
