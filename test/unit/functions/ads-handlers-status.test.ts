/**
 * The ADS handlers keep a proxy status per stream (keys.proxy, written on an ACK) unless the host
 * says nobody reads it (recordStatus false: the agent, whose proxies' NACKs go upstream instead).
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createAdsHandlers } from "../../../functions/ads-handlers.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createPushSignal } from "../../../lib/push/signal.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { TypeUrl } from "../../../lib/xds/types.ts";

const nodeId = "sidecar~10.0.0.1~p.ns~ns.svc.cluster.local";

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
    { name: "recorded by default", recordStatus: undefined, records: 1 },
    { name: "not kept with recordStatus false", recordStatus: false, records: 0 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { store, puts } = await storeWithCluster();
      const ads = createAdsHandlers({
        store,
        pushes: createPushSignal(),
        log: () => {},
        ...(c.recordStatus !== undefined && { recordStatus: c.recordStatus }),
      });
      const answers: DiscoveryResponse[] = [];
      let answered: (res: DiscoveryResponse) => void = () => {};
      const first = new Promise<DiscoveryResponse>((r) => {
        answered = r;
      });
      // The proxy: its request, then the ACK of the answer, then the end of the stream.
      async function* requests(): AsyncGenerator<DiscoveryRequest> {
        yield create(DiscoveryRequestSchema, { node: { id: nodeId }, typeUrl: TypeUrl.cluster });
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
