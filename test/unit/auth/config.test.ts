/** XDS_AUTH in parseConfig: the loopback default, the required choice elsewhere, and what each error tells the user. */
import { describe, expect, it } from "vitest";
import { xdsAuthLogLine } from "../../../lib/auth/config.ts";
import { parseConfig } from "../../../lib/config.ts";

const jwtEnv = { XDS_AUTH: "jwt", XDS_JWT_ISSUER: "https://k8s", XDS_JWT_AUDIENCE: "edgepilot, istio-ca" };

describe("XDS_AUTH", () => {
  it.each([
    ["nothing set: loopback, none by default", {}, { mode: "none", explicit: false }],
    ["HOST=localhost", { HOST: "localhost" }, { mode: "none", explicit: false }],
    ["HOST=::1", { HOST: "::1" }, { mode: "none", explicit: false }],
    ["explicit none on 0.0.0.0", { HOST: "0.0.0.0", XDS_AUTH: "none" }, { mode: "none", explicit: true }],
    [
      "token with EDGEPILOT_TOKEN (HOST 0.0.0.0)",
      { EDGEPILOT_TOKEN: "t", XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: "0123456789abcdef" },
      { mode: "token", token: "0123456789abcdef" },
    ],
    [
      "jwt with a URL",
      { ...jwtEnv, XDS_JWKS_URL: "https://k8s/openid/v1/jwks" },
      {
        mode: "jwt",
        issuer: "https://k8s",
        audiences: ["edgepilot", "istio-ca"],
        jwksUrl: "https://k8s/openid/v1/jwks",
      },
    ],
    [
      "jwt with a file and an HMAC secret",
      { ...jwtEnv, XDS_JWKS_FILE: "/etc/jwks.json", XDS_JWT_HMAC_SECRET: "s".repeat(32) },
      { mode: "jwt", jwksFile: "/etc/jwks.json", hmacSecret: "s".repeat(32) },
    ],
  ])("%s", (_name, env, expected) => {
    const r = parseConfig(env);
    expect(r.ok ? r.config.xdsAuth : r.errors).toMatchObject(expected);
  });

  it.each([
    [
      "HOST=0.0.0.0 without XDS_AUTH",
      { HOST: "0.0.0.0" },
      /^XDS_AUTH is not set and HOST=0.0.0.0 is not a loopback address: .*Set XDS_AUTH=token with EDGEPILOT_XDS_TOKEN=.*XDS_AUTH=none/,
    ],
    [
      "EDGEPILOT_TOKEN set (HOST defaults to 0.0.0.0) without XDS_AUTH",
      { EDGEPILOT_TOKEN: "t" },
      /HOST defaults to 0.0.0.0 because EDGEPILOT_TOKEN is set.*or set HOST=127.0.0.1 to keep both ports on loopback/,
    ],
    ["an unknown mode", { XDS_AUTH: "mtls" }, /^XDS_AUTH=mtls: not one of none, token, jwt$/],
    [
      "token without EDGEPILOT_XDS_TOKEN",
      { XDS_AUTH: "token" },
      /^EDGEPILOT_XDS_TOKEN: .*at least 16 characters \(it is not set\)/,
    ],
    ["a short token", { XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: "short" }, /\(it has 5\)/],
    ["jwt without issuer", { ...jwtEnv, XDS_JWT_ISSUER: "", XDS_JWKS: "{}" }, /^XDS_JWT_ISSUER: /],
    ["jwt without audience", { ...jwtEnv, XDS_JWT_AUDIENCE: " , ", XDS_JWKS: "{}" }, /^XDS_JWT_AUDIENCE: /],
    ["jwt without a key source", jwtEnv, /XDS_AUTH=jwt needs a key source: XDS_JWKS_URL/],
    [
      "a bad JWKS URL",
      { ...jwtEnv, XDS_JWKS_URL: "file:///etc/jwks" },
      /^XDS_JWKS_URL=file:\/\/\/etc\/jwks: not an http\(s\) URL/,
    ],
    ["a short HMAC secret", { ...jwtEnv, XDS_JWT_HMAC_SECRET: "short" }, /^XDS_JWT_HMAC_SECRET: at least 32/],
  ])("refuses %s", (_name, env, error) => {
    const r = parseConfig(env);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join("\n")).toMatch(error);
  });

  it("the Worker must choose, whatever HOST says", () => {
    const r = parseConfig({ HOST: "127.0.0.1" }, { worker: true });
    expect(r.ok ? "accepted" : r.errors.join("\n")).toMatch(
      /^XDS_AUTH is not set: a Worker is reachable from anywhere.*wrangler secret put/,
    );
    expect(parseConfig({ XDS_AUTH: "none" }, { worker: true }).ok).toBe(true);
  });

  it.each([
    [
      { mode: "none", explicit: true } as const,
      "0.0.0.0",
      false,
      /^edgepilot: WARNING: XDS_AUTH=none: .* on 0.0.0.0 answer ANYONE/,
    ],
    [{ mode: "none", explicit: true } as const, "", true, /WARNING: .* on this Worker answer ANYONE/],
    [
      { mode: "none", explicit: false } as const,
      "127.0.0.1",
      false,
      /unauthenticated \(the default on loopback 127.0.0.1\)/,
    ],
    [{ mode: "token", token: "x" } as const, "0.0.0.0", false, /XDS_AUTH=token: every xDS read needs/],
  ])("start-up line for %j on %s", (auth, host, worker, line) => {
    expect(xdsAuthLogLine(auth, { host, worker })).toMatch(line);
  });
});
