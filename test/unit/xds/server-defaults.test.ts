/**
 * Every host builds its xDS server (lib/xds/server.ts) from the settings its own file exports, and
 * resolveXdsSettings applies the one set of defaults. Two hosts given the same configuration must
 * resolve to the same server, except where a difference is listed here with its reason.
 */
import { describe, expect, it } from "vitest";
import { lambdaXdsSettings } from "../../../functions/lambda/xds-host.ts";
import { agentXdsSettings } from "../../../functions/node/agent-runtime.ts";
import { nodeXdsSettings } from "../../../functions/node/runtime.ts";
import { workerXdsSettings } from "../../../functions/workers/app.ts";
import { meshStoreXdsSettings } from "../../../functions/workers/poll-host.ts";
import { type Config, type Env, parseConfig } from "../../../lib/config.ts";
import { createChangeFeed } from "../../../lib/core/change-feed.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { defaultAdsLimits } from "../../../lib/xds/delta-limits.ts";
import { defaultLimits } from "../../../lib/xds/limits.ts";
import {
  proxyStatusWriteIntervalMs,
  sharedProxyStatusWriteIntervalMs,
} from "../../../lib/xds/proxy-status.ts";
import {
  createXdsServer,
  type ResolvedXdsSettings,
  resolveXdsSettings,
  type XdsServerSettings,
} from "../../../lib/xds/server.ts";
import { sidecarViewOptions } from "../../../lib/xds/view-source.ts";

function config(env: Env): Config {
  const parsed = parseConfig(env);
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  return parsed.config;
}

const configs: [string, Config][] = [
  ["the defaults", config({})],
  [
    "limits, a domain suffix and discovery selectors set",
    config({
      EDGEPILOT_MAX_STREAMS: "7",
      EDGEPILOT_MAX_NAMES_PER_REQUEST: "11",
      EDGEPILOT_MAX_REQUEST_BYTES: "123456",
      DOMAIN_SUFFIX: "mesh.example",
      DISCOVERY_SELECTORS: JSON.stringify([{ matchLabels: { team: "a" } }]),
    }),
  ],
];

/** The one legitimate difference of a host from Node's memory-store instance: the field and why. */
interface Difference {
  host: string;
  settings: (c: Config) => XdsServerSettings;
  /** What differs from Node's (over a memory store), each with the reason it must. */
  differs: { why: string; resolved: (node: ResolvedXdsSettings) => Partial<ResolvedXdsSettings> }[];
}

const hosts: Difference[] = [
  { host: "Node over a memory or file store", settings: (c) => nodeXdsSettings(c, false), differs: [] },
  {
    host: "Node over a shared store (DynamoDB)",
    settings: (c) => nodeXdsSettings(c, true),
    differs: [
      {
        why: "status writes to a shared store are billed and other instances write too",
        resolved: () => ({ proxyStatus: { writeIntervalMs: sharedProxyStatusWriteIntervalMs, sweep: true } }),
      },
    ],
  },
  {
    host: "a Lambda container",
    settings: lambdaXdsSettings,
    differs: [
      {
        why: "its store is always shared (DynamoDB): as Node's over a shared store",
        resolved: () => ({ proxyStatus: { writeIntervalMs: sharedProxyStatusWriteIntervalMs, sweep: true } }),
      },
      {
        why: "DynamoDB expires proxy records by their TTL, and a container runs only during invocations",
        resolved: () => ({
          proxyStatus: { writeIntervalMs: sharedProxyStatusWriteIntervalMs, sweep: false },
        }),
      },
      { why: "a function URL cannot serve bidi gRPC, so no ADS is built", resolved: () => ({ ads: false }) },
    ],
  },
  {
    host: "the Worker's isolate",
    settings: workerXdsSettings,
    differs: [
      {
        why: "it hears no pushes, so nothing would drop cached views",
        resolved: (node) => ({ views: { ...node.views, cache: false } }),
      },
      {
        why: "it serves no ADS stream and no Poll (the Durable Object does)",
        resolved: () => ({ proxyStatus: false }),
      },
      { why: "Workers cannot serve bidi gRPC, so no ADS is built", resolved: () => ({ ads: false }) },
    ],
  },
  {
    host: "the MeshStore Durable Object",
    settings: meshStoreXdsSettings,
    differs: [
      {
        why: "nothing sweeps expired proxy/ records in the object: Poll NACKs are logged, not stored",
        resolved: () => ({ proxyStatus: false }),
      },
      { why: "Workers cannot serve bidi gRPC, so no ADS is built", resolved: () => ({ ads: false }) },
    ],
  },
];

describe("the hosts' xDS server settings", () => {
  for (const [name, c] of configs) {
    describe(`with ${name}`, () => {
      const node = resolveXdsSettings(nodeXdsSettings(c, false));

      it("Node's take the configuration's limits and the registry's sidecar view options", () => {
        expect(node.limits).toEqual({
          maxStreams: c.limits.maxStreams,
          maxNamesPerRequest: c.limits.maxNamesPerRequest,
          maxRequestBytes: c.limits.maxRequestBytes,
          maxResponseBytes: c.limits.maxResponseBytes,
        });
        expect(node.ads).toEqual({
          ...defaultAdsLimits,
          maxStreams: c.limits.maxStreams,
          maxNamesPerRequest: c.limits.maxNamesPerRequest,
        });
        expect(node.views).toEqual({
          cache: true,
          sidecarResources: true,
          ...sidecarViewOptions(c.registry),
        });
        expect(node.proxyStatus).toEqual({ writeIntervalMs: proxyStatusWriteIntervalMs, sweep: true });
      });

      for (const h of hosts) {
        it(`${h.host}: as Node's, but for ${h.differs.map((d) => d.why).join("; ") || "nothing"}`, () => {
          const expected = Object.assign({ ...node }, ...h.differs.map((d) => d.resolved(node)));
          expect(resolveXdsSettings(h.settings(c))).toEqual(expected);
        });
      }
    });
  }

  it("the agent's: the defaults, not the control plane's, with its own differences", () => {
    const readMaxBytes = 16 * 1024 * 1024;
    expect(resolveXdsSettings(agentXdsSettings(readMaxBytes))).toEqual({
      // It reads none of the control plane's EDGEPILOT_* limits; a response may be as large as a
      // message it accepts from its upstream.
      limits: { ...pickLimits(defaultLimits), maxResponseBytes: readMaxBytes },
      ads: defaultAdsLimits,
      // Its cache already holds what the upstream generated for its proxy: served as is.
      views: { cache: true, sidecarResources: false },
      // Nothing reads its local streams' status: their NACKs go upstream.
      proxyStatus: false,
    });
  });
});

describe("createXdsServer", () => {
  it("is built with the resolved settings of what it was given", () => {
    const c = configs[1]?.[1] as Config;
    const settings = nodeXdsSettings(c, false);
    const core = { store: createMemoryStore(), feed: createChangeFeed(() => {}) };
    const server = createXdsServer(core, { ...settings, log: () => {} });
    expect(server.settings).toEqual(resolveXdsSettings(settings));
    expect(server.ads).toBeDefined();
    expect(server.poll).toBeDefined();
  });

  it("builds Poll/Watch and no ADS over a core with a feed when the settings say ads: false", () => {
    const c = configs[0]?.[1] as Config;
    for (const settings of [lambdaXdsSettings(c), meshStoreXdsSettings(c)]) {
      const core = { store: createMemoryStore(), feed: createChangeFeed(() => {}) };
      const server = createXdsServer(core, { ...settings, log: () => {} });
      expect(server.settings.ads).toBe(false);
      expect(server.poll).toBeDefined();
      expect("ads" in server).toBe(false);
    }
  });

  it("refuses to cache views over a core without a feed, and builds no ADS or Poll there", () => {
    const store = createMemoryStore();
    expect(() => createXdsServer({ store }, { log: () => {} })).toThrow(/cacheViews: false/);
    const server = createXdsServer({ store }, { log: () => {}, cacheViews: false });
    expect(server.ads).toBeUndefined();
    expect(server.poll).toBeUndefined();
  });
});

function pickLimits(l: Config["limits"]) {
  const { maxStreams, maxNamesPerRequest, maxRequestBytes, maxResponseBytes } = l;
  return { maxStreams, maxNamesPerRequest, maxRequestBytes, maxResponseBytes };
}
