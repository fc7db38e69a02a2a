/**
 * A raw ADS client over real gRPC (connect-node, h2c): send requests, read responses one by one.
 * Every resource received is checked against Envoy's PGV rules (test/support/xds-check.ts): `next()`
 * throws on a response Envoy would NACK; `dangling()` checks what is held when the subscription is complete.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { checkSotwResponse, createHeldSet } from "../../support/xds-check.ts";
import { requestQueue } from "./request-queue.ts";

export interface AdsStream {
  send(req: MessageInitShape<typeof DiscoveryRequestSchema>): void;
  /** The next response, or undefined if none arrives within `ms`. */
  next(ms?: number): Promise<DiscoveryResponse | undefined>;
  close(): void;
  /** The error that ended the stream, as text ("" while it is open or ended cleanly). */
  error(): string;
  /** The dangling cross-references among the latest resources received (a complete, whole-mesh subscription). */
  dangling(): string[];
}

/** Opens a SotW ADS stream to `127.0.0.1:xdsPort`. */
export function openAds(xdsPort: number): AdsStream {
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }),
  );
  const queue = requestQueue<ReturnType<typeof create<typeof DiscoveryRequestSchema>>>();
  const responses: DiscoveryResponse[] = [];
  const invalid = new WeakMap<DiscoveryResponse, Error>();
  const held = createHeldSet();
  let arrived: (() => void) | undefined;
  const abort = new AbortController();
  let failure = "";
  void (async () => {
    try {
      for await (const r of client.streamAggregatedResources(queue.requests, { signal: abort.signal })) {
        try {
          checkSotwResponse(r);
          held.applySotw(r);
        } catch (e) {
          invalid.set(r, e as Error);
        }
        responses.push(r);
        arrived?.();
      }
    } catch (e) {
      failure = String(e);
      arrived?.();
    }
  })();
  return {
    send(req) {
      queue.push(create(DiscoveryRequestSchema, req));
    },
    async next(ms = 2000) {
      if (responses.length === 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, ms);
          arrived = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      const r = responses.shift();
      const bad = r && invalid.get(r);
      if (bad) throw bad;
      return r;
    },
    error: () => failure,
    dangling: () => held.dangling(),
    close() {
      queue.close();
      abort.abort();
    },
  };
}
