import { describe, expect, it } from "vitest";
import { defaultLogConfig } from "../../../lib/log/config.ts";
import { parseRelayConfig, type RelayConfig, relayUsage } from "../../../lib/relay/config.ts";

const base = { EDGEPILOT_URL: "http://edgepilot.edgepilot:8080/" };

describe("parseRelayConfig", () => {
  it("defaults", () => {
    expect(parseRelayConfig(base, [])).toEqual({
      ok: true,
      config: {
        url: "http://edgepilot.edgepilot:8080",
        token: undefined,
        clusterId: "Kubernetes",
        resyncPeriodMs: 600_000,
        batchSize: 500,
        batchDelayMs: 100,
        maxQueuedEvents: 10_000,
        listPageSize: 500,
        watchEndpoints: false,
        istioNamespace: "istio-system",
        watchIstio: true,
        discoveryIntervalMs: 30_000,
        shutdownTimeoutMs: 10_000,
        statusIntervalMs: 5000,
        logEvents: false,
        healthPort: undefined,
        healthHost: "127.0.0.1",
        log: defaultLogConfig,
      } satisfies RelayConfig,
    });
  });

  it("reads the environment; flags win", () => {
    const env = {
      ...base,
      EDGEPILOT_TOKEN: "t",
      CLUSTER_ID: "east",
      RELAY_RESYNC_PERIOD: "1m30s",
      RELAY_BATCH_SIZE: "50",
      RELAY_BATCH_DELAY: "250ms",
      RELAY_WATCH_ISTIO: "false",
    };
    const got = parseRelayConfig(env, [
      "--cluster",
      "west",
      "--batch-size=20",
      "--endpoints",
      "--istio",
      "--url=https://x/",
    ]);
    expect(got).toMatchObject({
      ok: true,
      config: {
        url: "https://x",
        token: "t",
        clusterId: "west",
        resyncPeriodMs: 90_000,
        batchSize: 20,
        batchDelayMs: 250,
        watchEndpoints: true,
        watchIstio: true,
      },
    });
    expect(parseRelayConfig(env, ["--no-istio"])).toMatchObject({ config: { watchIstio: false } });
    expect(parseRelayConfig({ ...base, RELAY_DISCOVERY_INTERVAL: "2m" }, [])).toMatchObject({
      config: { discoveryIntervalMs: 120_000 },
    });
    expect(parseRelayConfig(base, ["--discovery-interval=0"])).toMatchObject({
      config: { discoveryIntervalMs: 0 },
    });
    expect(parseRelayConfig({ ...base, RELAY_RESYNC_PERIOD: "0" }, [])).toMatchObject({
      config: { resyncPeriodMs: 0 },
    });
    expect(
      parseRelayConfig({ ...base, RELAY_HEALTH_PORT: "9090" }, ["--health-host", "0.0.0.0"]),
    ).toMatchObject({ config: { healthPort: 9090, healthHost: "0.0.0.0" } });
    expect(parseRelayConfig(base, ["--health-port=0"])).toMatchObject({ config: { healthPort: 0 } });
    expect(parseRelayConfig({ ...base, RELAY_STATUS_INTERVAL: "0" }, [])).toMatchObject({
      config: { statusIntervalMs: 0 },
    });
    expect(parseRelayConfig(base, ["--status-interval=250ms"])).toMatchObject({
      config: { statusIntervalMs: 250 },
    });
  });

  const bad: { name: string; env?: Record<string, string>; argv?: string[]; error: RegExp }[] = [
    { name: "no URL", env: { EDGEPILOT_URL: "" }, error: /^EDGEPILOT_URL is not set/ },
    { name: "not a URL", env: { EDGEPILOT_URL: "edgepilot:8080x" }, error: /EDGEPILOT_URL=.*must be http/ },
    {
      name: "URL with a query",
      env: { EDGEPILOT_URL: "http://x/?cluster=a" },
      error: /must not have a query/,
    },
    { name: "cluster id", env: { CLUSTER_ID: "a b" }, error: /^CLUSTER_ID=a b: a cluster id is/ },
    {
      name: "status interval",
      env: { RELAY_STATUS_INTERVAL: "soon" },
      error: /^RELAY_STATUS_INTERVAL=soon: not a duration/,
    },
    {
      name: "duration",
      env: { RELAY_RESYNC_PERIOD: "10 minutes" },
      error: /^RELAY_RESYNC_PERIOD=10 minutes: not a duration/,
    },
    {
      name: "discovery interval",
      env: { RELAY_DISCOVERY_INTERVAL: "often" },
      error: /^RELAY_DISCOVERY_INTERVAL=often: not a duration/,
    },
    {
      name: "discovery interval below 1s",
      argv: ["--discovery-interval", "200ms"],
      error: /^--discovery-interval=200ms \(RELAY_DISCOVERY_INTERVAL\): at least 1s/,
    },
    {
      name: "batch size 0",
      env: { RELAY_BATCH_SIZE: "0" },
      error: /^RELAY_BATCH_SIZE=0: not a whole number from 1 to 10000/,
    },
    { name: "batch size text", env: { RELAY_BATCH_SIZE: "lots" }, error: /^RELAY_BATCH_SIZE=lots/ },
    {
      name: "health port",
      env: { RELAY_HEALTH_PORT: "70000" },
      error: /^RELAY_HEALTH_PORT=70000: not a whole number from 0 to 65535/,
    },
    {
      name: "boolean",
      env: { RELAY_WATCH_ENDPOINTS: "maybe" },
      error: /^RELAY_WATCH_ENDPOINTS=maybe: not a boolean/,
    },
    {
      name: "flag value",
      argv: ["--batch-delay", "soon"],
      error: /^--batch-delay=soon \(RELAY_BATCH_DELAY\): not a duration/,
    },
    { name: "flag without value", argv: ["--cluster"], error: /^--cluster: needs a value/ },
    { name: "unknown flag", argv: ["--verbose"], error: /^--verbose: unknown argument/ },
    { name: "--no- on a value flag", argv: ["--no-cluster"], error: /only boolean flags take --no-/ },
    {
      name: "ISTIO_NAMESPACE not a namespace name",
      env: { ISTIO_NAMESPACE: "Istio_System" },
      error: /^ISTIO_NAMESPACE=Istio_System: not a namespace name/,
    },
    {
      name: "queue below batch",
      env: { RELAY_MAX_QUEUE: "10", RELAY_BATCH_SIZE: "20" },
      error: /^RELAY_MAX_QUEUE=10: must be at least RELAY_BATCH_SIZE/,
    },
  ];
  for (const c of bad) {
    it(`rejects: ${c.name}`, () => {
      const got = parseRelayConfig({ ...base, ...c.env }, c.argv ?? []);
      expect(got.ok).toBe(false);
      expect(got.ok === false && got.errors.some((e) => c.error.test(e))).toBe(true);
    });
  }

  it("ISTIO_NAMESPACE from the environment or --istio-namespace", () => {
    expect(parseRelayConfig({ ...base, ISTIO_NAMESPACE: "mesh-admin" }, [])).toMatchObject({
      config: { istioNamespace: "mesh-admin" },
    });
    expect(parseRelayConfig(base, ["--istio-namespace=other"])).toMatchObject({
      config: { istioNamespace: "other" },
    });
  });

  it("reports every problem at once", () => {
    const got = parseRelayConfig({ RELAY_BATCH_SIZE: "0", CLUSTER_ID: "/" }, []);
    expect(got.ok === false && got.errors).toHaveLength(3);
  });

  it("--help", () => {
    expect(parseRelayConfig({}, ["--help"])).toEqual({ ok: "help" });
    expect(relayUsage()).toMatch(/--batch-size <v>\s+RELAY_BATCH_SIZE/);
    expect(relayUsage()).toMatch(/--discovery-interval <v>\s+RELAY_DISCOVERY_INTERVAL .*\(default 30s\)/);
    expect(relayUsage()).toMatch(/--status-interval <v>\s+RELAY_STATUS_INTERVAL .*\(default 5s\)/);
  });
});

describe("cluster ids", () => {
  it("follow the control plane's rule (lib/config.ts), restated in the relay", async () => {
    const { isClusterId } = await import("../../../lib/config.ts");
    for (const id of [
      "Kubernetes",
      "east-1",
      "a.b_c",
      "x".repeat(63),
      "x".repeat(64),
      "",
      "-a",
      "a/b",
      "a b",
      "ü",
    ]) {
      const relay = parseRelayConfig({ ...base, CLUSTER_ID: id }, []);
      // An empty CLUSTER_ID means unset (the default), in the relay as in the control plane.
      expect(relay.ok === true, id).toBe(id === "" || isClusterId(id));
    }
  });
});
