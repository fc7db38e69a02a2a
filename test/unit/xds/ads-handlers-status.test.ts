/**
 * The xDS server's ADS handlers keep a proxy status per stream (keys.proxy, written on an ACK)
 * unless the host says nobody reads it (proxyStatus false: the agent, whose proxies' NACKs go
 * upstream instead), at most once per interval: 1 s by default, 10 s over a shared store
 * (proxyStatus.writeIntervalMs).
 */
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createChangeFeed } from "../../../lib/core/change-feed.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { sharedProxyStatusWriteIntervalMs } from "../../../lib/xds/proxy-status.ts";
import { createXdsServer } from "../../../lib/xds/server.ts";

const nodeId = "sidecar~10.0.0.1~p.ns~ns.svc.cluster.local";
/** A proxyless client's metadata: it is served the published set. */
const grpc = { GENERATOR: "grpc" };

/** A memory store holding one cluster, that notes the key of every put. */
async function storeWithCluster(): Promise<{ store: Store; puts: string[] }> {
  const base = createMemoryStore();
  await base.put(keys.resource(TypeUrl.cluster, "c1"), {
    typeUrl: TypeUrl.cluster,
    name: "c1",
    version: "v1",
    body: new Uint8Array([1]),
    service: "ns/h",
  });
  const puts: string[] = [];
  const store: Store = {
    ...base,
    put: (key, value) => {
      puts.push(key);
      return base.put(key, value);
    },
  };
  return { store, puts };
}

describe("ADS handlers' proxy status", () => {
  const cases = [
    { name: "recorded by default", proxyStatus: undefined, records: 1 },
    { name: "not kept with proxyStatus false", proxyStatus: false as const, records: 0 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { store, puts } = await storeWithCluster();
      const { ads } = createXdsServer(
        { store, feed: createChangeFeed(() => {}) },
        { log: () => {}, ...(c.proxyStatus !== undefined && { proxyStatus: c.proxyStatus }) },
      );
      const answers: DiscoveryResponse[] = [];
      let answered: (res: DiscoveryResponse) => void = () => {};
      const first = new Promise<DiscoveryResponse>((r) => {
        answered = r;
      });
      // The proxy: its request, then the ACK of the answer, then the end of the stream.
      async function* requests(): AsyncGenerator<DiscoveryRequest> {
        yield create(DiscoveryRequestSchema, {
          node: { id: nodeId, metadata: grpc },
          typeUrl: TypeUrl.cluster,
        });
        const res = await first;
        yield create(DiscoveryRequestSchema, {
          typeUrl: res.typeUrl,
          versionInfo: res.versionInfo,
          responseNonce: res.nonce,
        });
      }
      const done = ads.sotw(requests(), new AbortController().signal, (res) => {
        answers.push(res);
        answered(res);
      });
      await done;
      expect(answers.map((a) => a.resources.length)).toEqual([1]);
      expect(puts.filter((k) => k.startsWith(keys.proxyPrefix()))).toHaveLength(c.records);
    });
  }
});

describe("ADS handlers' proxy status interval", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // An ACK every 2 s, five in all: the default interval (1 s) writes each; a shared store's (10 s) only the first.
  const cases = [
    { name: "default: at most one write a second", writeIntervalMs: undefined, writes: 5 },
    {
      name: "shared store: at most one write per sharedProxyStatusWriteIntervalMs",
      writeIntervalMs: sharedProxyStatusWriteIntervalMs,
      writes: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const { store, puts } = await storeWithCluster();
      const pushes = createChangeFeed(() => {});
      const { ads } = createXdsServer(
        { store, feed: pushes },
        {
          log: () => {},
          ...(c.writeIntervalMs !== undefined && { proxyStatus: { writeIntervalMs: c.writeIntervalMs } }),
        },
      );
      const responses: DiscoveryResponse[] = [];
      // Everyone waiting for a response (the proxy and the test).
      let waiting: (() => void)[] = [];
      const next = async (n: number) => {
        while (responses.length < n) await new Promise<void>((r) => waiting.push(r));
        return responses[n - 1] as DiscoveryResponse;
      };
      const stop = new AbortController();
      async function* requests(): AsyncGenerator<DiscoveryRequest> {
        yield create(DiscoveryRequestSchema, {
          node: { id: nodeId, metadata: grpc },
          typeUrl: TypeUrl.cluster,
        });
        for (let n = 1; n <= 5; n++) {
          const res = await next(n);
          yield create(DiscoveryRequestSchema, {
            typeUrl: res.typeUrl,
            versionInfo: res.versionInfo,
            responseNonce: res.nonce,
          });
        }
        await new Promise(() => {}); // the proxy keeps its stream open
      }
      const done = ads.sotw(requests(), stop.signal, (res) => {
        responses.push(res);
        for (const w of waiting) w();
        waiting = [];
      });
      const proxyWrites = () => puts.filter((k) => k.startsWith(keys.proxyPrefix())).length;
      for (let n = 2; n <= 5; n++) {
        await next(n - 1);
        await vi.advanceTimersByTimeAsync(2000);
        // A new version of the cluster, pushed: the proxy ACKs it.
        await store.put(keys.resource(TypeUrl.cluster, "c1"), {
          typeUrl: TypeUrl.cluster,
          name: "c1",
          version: `v${n}`,
          body: new Uint8Array([n]),
          service: "ns/h",
        });
        pushes.emit({ version: n });
      }
      await next(5);
      // 9 s after the first ACK: the shared interval is not over yet.
      await vi.advanceTimersByTimeAsync(1000);
      expect(proxyWrites()).toBe(c.writes);
      stop.abort();
      await done.catch(() => undefined);
    });
  }
});
