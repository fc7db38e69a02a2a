/**
 * The agent's certificate settings (lib/agent/cert-config.ts through parseAgentConfig): off without
 * SERVICE_ACCOUNT, Istio's defaults, the CA's protocol chosen by where it is, every problem named.
 */
import { describe, expect, it } from "vitest";
import { agentUsage, parseAgentConfig } from "../../../lib/agent/config.ts";

const env = (o: Record<string, string | undefined> = {}) => ({
  EDGEPILOT_AGENT_UPSTREAM: "http://edgepilot.edgepilot:15010",
  POD_NAMESPACE: "shop",
  ...o,
});
const certs = (e: Record<string, string | undefined>, argv: string[] = []) => {
  const r = parseAgentConfig(env(e), argv);
  if (r.ok !== true) throw new Error(r.ok === "help" ? "help" : r.errors.join("\n"));
  return r.config.certs;
};
const errors = (e: Record<string, string | undefined>, argv: string[] = []) => {
  const r = parseAgentConfig(env(e), argv);
  return r.ok === false ? r.errors : [];
};

describe("agent certificate config", () => {
  it("is off without SERVICE_ACCOUNT", () => {
    expect(certs({})).toBeUndefined();
  });

  it("takes Istio's defaults: the upstream over gRPC with its token, 24h, 0.5 ± 0.01, Istio's socket", () => {
    expect(certs({ SERVICE_ACCOUNT: "cart", EDGEPILOT_AGENT_TOKEN_FILE: "/var/run/token" })).toEqual({
      identity: "spiffe://cluster.local/ns/shop/sa/cart",
      caAddr: "http://edgepilot.edgepilot:15010",
      caProtocol: "grpc",
      caHttp: "2",
      caRootFile: undefined,
      tokenFile: "/var/run/token",
      ttlMs: 24 * 3_600_000,
      graceRatio: 0.5,
      graceRatioJitter: 0.01,
      sdsSocket: "./var/run/secrets/workload-spiffe-uds/socket",
      outputDir: undefined,
    });
  });

  it("speaks Connect to a Worker or Lambda upstream, gRPC to a CA named apart", () => {
    const worker = { SERVICE_ACCOUNT: "cart", EDGEPILOT_AGENT_UPSTREAM: "https://mesh.example.workers.dev" };
    expect(certs({ ...worker, EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: "watch" })).toMatchObject({
      caAddr: "https://mesh.example.workers.dev",
      caProtocol: "connect",
      caHttp: "2",
    });
    expect(
      certs({ ...worker, EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: "poll", EDGEPILOT_AGENT_UPSTREAM_HTTP: "1.1" }),
    ).toMatchObject({ caProtocol: "connect", caHttp: "1.1" });
    expect(
      certs({ ...worker, EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: "poll" }, [
        "--ca-addr=https://istiod.istio-system:15012",
      ]),
    ).toMatchObject({ caAddr: "https://istiod.istio-system:15012", caProtocol: "grpc", caHttp: "2" });
  });

  it("takes every setting from flags or variables", () => {
    expect(
      certs(
        {
          SERVICE_ACCOUNT: "cart",
          TRUST_DOMAIN: "corp.example",
          EDGEPILOT_CA_ADDR: "https://ca:15012",
          EDGEPILOT_CA_ROOT_CA: "/etc/ca/root.pem",
          EDGEPILOT_CA_TOKEN_FILE: "/var/run/secrets/tokens/istio-token",
          SECRET_TTL: "1h30m",
          SECRET_GRACE_PERIOD_RATIO: "0.25",
          SECRET_GRACE_PERIOD_RATIO_JITTER: "0",
          OUTPUT_CERTS: "/var/lib/istio/data",
        },
        ["--sds-socket", "/run/sds.sock"],
      ),
    ).toEqual({
      identity: "spiffe://corp.example/ns/shop/sa/cart",
      caAddr: "https://ca:15012",
      caProtocol: "grpc",
      caHttp: "2",
      caRootFile: "/etc/ca/root.pem",
      tokenFile: "/var/run/secrets/tokens/istio-token",
      ttlMs: 90 * 60_000,
      graceRatio: 0.25,
      graceRatioJitter: 0,
      sdsSocket: "/run/sds.sock",
      outputDir: "/var/lib/istio/data",
    });
  });

  it.each([
    [{ SERVICE_ACCOUNT: "Cart" }, /^SERVICE_ACCOUNT="Cart": not a service account name/],
    [{ SERVICE_ACCOUNT: "cart", SECRET_TTL: "soon" }, /^SECRET_TTL: not a duration/],
    [{ SERVICE_ACCOUNT: "cart", SECRET_TTL: "10ms" }, /^SECRET_TTL="10ms": at least 1s/],
    [
      { SERVICE_ACCOUNT: "cart", SECRET_GRACE_PERIOD_RATIO: "2" },
      /^SECRET_GRACE_PERIOD_RATIO="2": want a number from 0 to 1/,
    ],
    [{ SERVICE_ACCOUNT: "cart", EDGEPILOT_CA_ADDR: "ca:15012" }, /^EDGEPILOT_CA_ADDR="ca:15012": want http/],
    [
      { SERVICE_ACCOUNT: "cart", EDGEPILOT_CA_ROOT_CA: "/r.pem" },
      /^EDGEPILOT_CA_ROOT_CA: set, but the CA http:.* is cleartext/,
    ],
    [{ OUTPUT_CERTS: "/d" }, /^OUTPUT_CERTS: set, but SERVICE_ACCOUNT is not/],
    [{ SERVICE_ACCOUNT: "cart", TRUST_DOMAIN: "a/b" }, /^TRUST_DOMAIN="a\/b": not a trust domain/],
  ])("refuses %j, naming it", (e, error) => {
    expect(errors(e)[0]).toMatch(error);
  });

  it("lists the certificate settings in --help", () => {
    for (const v of [
      "SERVICE_ACCOUNT",
      "EDGEPILOT_CA_ADDR",
      "EDGEPILOT_CA_ROOT_CA",
      "SECRET_TTL",
      "OUTPUT_CERTS",
    ])
      expect(agentUsage()).toContain(v);
  });
});
