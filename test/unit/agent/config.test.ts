import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { agentUsage, cleartextOffHost, parseAgentConfig } from "../../../lib/agent/config.ts";
import { localNodeProblem } from "../../../lib/agent/local-node.ts";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { defaultLogConfig } from "../../../lib/log/config.ts";

const env = (o: Record<string, string | undefined> = {}) => ({
  EDGEPILOT_AGENT_UPSTREAM: "http://edgepilot.edgepilot:15010",
  POD_NAMESPACE: "shop",
  ...o,
});

describe("agent config", () => {
  it("takes the environment, with defaults", () => {
    expect(parseAgentConfig(env(), [])).toEqual({
      ok: true,
      config: {
        upstream: "http://edgepilot.edgepilot:15010",
        tokenFile: undefined,
        namespace: "shop",
        port: 15011,
        socket: undefined,
        readyPort: 15021,
        protocol: "ads",
        http: "2",
        log: defaultLogConfig,
      },
    });
  });

  it("lets flags win, in both forms", () => {
    const r = parseAgentConfig(env(), [
      "--upstream=https://cp:15012",
      "--token-file",
      "/var/run/token",
      "--port=0",
      "--socket",
      "/etc/xds/agent.sock",
      "--ready-port",
      "9000",
      "--namespace=web",
      "--upstream-protocol=watch",
      "--upstream-http",
      "1.1",
    ]);
    expect(r).toEqual({
      ok: true,
      config: {
        upstream: "https://cp:15012",
        tokenFile: "/var/run/token",
        namespace: "web",
        port: 0,
        socket: "/etc/xds/agent.sock",
        readyPort: 9000,
        protocol: "watch",
        http: "1.1",
        log: defaultLogConfig,
      },
    });
  });

  it.each([
    {
      what: "no upstream",
      e: { EDGEPILOT_AGENT_UPSTREAM: "" },
      argv: [],
      error: /^EDGEPILOT_AGENT_UPSTREAM is not set/,
    },
    { what: "no namespace", e: { POD_NAMESPACE: "" }, argv: [], error: /^POD_NAMESPACE is not set/ },
    {
      what: "a bad namespace",
      e: { POD_NAMESPACE: "Shop_1" },
      argv: [],
      error: /^POD_NAMESPACE="Shop_1": not a Kubernetes namespace/,
    },
    {
      what: "not a URL",
      e: { EDGEPILOT_AGENT_UPSTREAM: "cp:15010" },
      argv: [],
      error: /^EDGEPILOT_AGENT_UPSTREAM: must be http:\/\/ \(h2c\) or https:\/\//,
    },
    {
      what: "a path",
      e: {},
      argv: ["--upstream", "http://cp:1/x"],
      error: /^--upstream \(EDGEPILOT_AGENT_UPSTREAM\): only scheme, host and port/,
    },
    {
      what: "a bad port",
      e: { EDGEPILOT_AGENT_PORT: "70000" },
      argv: [],
      error: /^EDGEPILOT_AGENT_PORT="70000": not a port/,
    },
    {
      what: "an unknown protocol",
      e: { EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: "grpc" },
      argv: [],
      error: /^EDGEPILOT_AGENT_UPSTREAM_PROTOCOL="grpc": want one of ads, watch, poll/,
    },
    {
      what: "an unknown HTTP version",
      e: { EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: "poll" },
      argv: ["--upstream-http=3"],
      error: /^--upstream-http \(EDGEPILOT_AGENT_UPSTREAM_HTTP\)="3": want one of 2, 1.1/,
    },
    {
      what: "ADS over HTTP/1.1",
      e: { EDGEPILOT_AGENT_UPSTREAM_HTTP: "1.1" },
      argv: [],
      error:
        /^EDGEPILOT_AGENT_UPSTREAM_HTTP=1.1 with EDGEPILOT_AGENT_UPSTREAM_PROTOCOL=ads: ADS is gRPC, HTTP\/2 only/,
    },
    { what: "an unknown flag", e: {}, argv: ["--bogus"], error: /^"--bogus": unknown argument/ },
    { what: "a flag without value", e: {}, argv: ["--socket"], error: /^--socket: needs a value/ },
  ])("refuses $what, naming the variable", ({ e, argv, error }) => {
    const r = parseAgentConfig(env(e), argv);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.errors[0]).toMatch(error);
  });

  it("takes the disk cache, the CA bundle and the readiness address", () => {
    const r = parseAgentConfig(env({ EDGEPILOT_AGENT_UPSTREAM: "https://cp:15012" }), [
      "--cache-dir=/var/lib/edgepilot",
      "--ca-file",
      "/etc/edgepilot/ca.pem",
      "--ready-host=0.0.0.0",
    ]);
    expect(r.ok === true && r.config).toMatchObject({
      cacheDir: "/var/lib/edgepilot",
      caFile: "/etc/edgepilot/ca.pem",
      readyHost: "0.0.0.0",
    });
    const e = parseAgentConfig(
      env({
        EDGEPILOT_AGENT_CACHE_DIR: "/c",
        EDGEPILOT_AGENT_READY_HOST: "::",
      }),
      [],
    );
    expect(e.ok === true && e.config).toMatchObject({ cacheDir: "/c", readyHost: "::" });
  });

  it.each([
    {
      what: "a CA bundle for a cleartext upstream",
      e: { EDGEPILOT_AGENT_CA_FILE: "/ca.pem" },
      error:
        /^EDGEPILOT_AGENT_CA_FILE: set, but the upstream http:\/\/edgepilot\.edgepilot:15010 is cleartext/,
    },
    {
      what: "a readiness address that is no IP",
      e: { EDGEPILOT_AGENT_READY_HOST: "localhost" },
      error: /^EDGEPILOT_AGENT_READY_HOST="localhost": not an IP address/,
    },
  ])("refuses $what, naming the variable", ({ e, error }) => {
    const r = parseAgentConfig(env(e), []);
    expect(r.ok === false && r.errors[0]).toMatch(error);
  });

  it("answers --help with every variable", () => {
    expect(parseAgentConfig({}, ["--help"])).toEqual({ ok: "help" });
    for (const v of [
      "EDGEPILOT_AGENT_UPSTREAM",
      "EDGEPILOT_AGENT_TOKEN_FILE",
      "POD_NAMESPACE",
      "EDGEPILOT_AGENT_SOCKET",
      "EDGEPILOT_AGENT_CACHE_DIR",
      "EDGEPILOT_AGENT_CA_FILE",
      "EDGEPILOT_AGENT_READY_HOST",
      "EDGEPILOT_AGENT_UPSTREAM_PROTOCOL",
      "EDGEPILOT_AGENT_UPSTREAM_HTTP",
    ])
      expect(agentUsage()).toContain(v);
  });

  it("knows when a token would cross the network in the clear", () => {
    expect(cleartextOffHost("http://127.0.0.1:15010")).toBe(false);
    expect(cleartextOffHost("http://[::1]:15010")).toBe(false);
    expect(cleartextOffHost("http://cp:15010")).toBe(true);
    expect(cleartextOffHost("https://cp:15010")).toBe(false);
  });
});

describe("local nodes", () => {
  const node = (id: string, metadata: Record<string, string> = {}) => create(NodeSchema, { id, metadata });
  it.each([
    { what: "its namespace by domain", n: node("sidecar~10.0.0.1~a.shop~shop.svc.cluster.local"), ok: true },
    { what: "its namespace by metadata", n: node("sidecar~10.0.0.1~a~x", { NAMESPACE: "shop" }), ok: true },
    {
      what: "another namespace",
      n: node("sidecar~10.0.0.1~a.web~web.svc.cluster.local"),
      ok: false,
      msg: /claims namespace "web", but this agent serves the proxies of namespace "shop"/,
    },
    { what: "no namespace", n: node("sidecar~10.0.0.1~a~local"), ok: false, msg: /claims no namespace/ },
    {
      what: "not Istio's form",
      n: node("proxy-1"),
      ok: false,
      msg: /missing parts in the service node "proxy-1"/,
    },
  ])("$what", ({ n, ok, msg }) => {
    const problem = localNodeProblem(n, "shop");
    if (ok) expect(problem).toBeUndefined();
    else expect(problem).toMatch(msg as RegExp);
  });
});
