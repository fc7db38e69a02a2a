/** A raw ADS client over real gRPC (connect-node, h2c): send requests, read responses one by one. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { requestQueue } from "./request-queue.ts";

export interface AdsStream {
  send(req: MessageInitShape<typeof DiscoveryRequestSchema>): void;
  /** The next response, or undefined if none arrives within `ms`. */
  next(ms?: number): Promise<DiscoveryResponse | undefined>;
  close(): void;
  /** The error that ended the stream, as text ("" while it is open or ended cleanly). */
  error(): string;
}

/** Opens a SotW ADS stream to `127.0.0.1:xdsPort`. */
export function openAds(xdsPort: number): AdsStream {
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }),
  );
  const queue = requestQueue<ReturnType<typeof create<typeof DiscoveryRequestSchema>>>();
  const responses: DiscoveryResponse[] = [];
  let arrived: (() => void) | undefined;
  const abort = new AbortController();
  let failure = "";
  void (async () => {
    try {
      for await (const r of client.streamAggregatedResources(queue.requests, { signal: abort.signal })) {
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
      return responses.shift();
    },
    error: () => failure,
    close() {
      queue.close();
      abort.abort();
    },
  };
}
