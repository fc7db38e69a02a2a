/** A raw ADS client over real gRPC (connect-node, h2c): send requests, read responses one by one. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";

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
  const pending: ReturnType<typeof create<typeof DiscoveryRequestSchema>>[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  async function* requests() {
    while (!closed) {
      const r = pending.shift();
      if (r) yield r;
      else
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
  }
  const responses: DiscoveryResponse[] = [];
  let arrived: (() => void) | undefined;
  const abort = new AbortController();
  let failure = "";
  void (async () => {
    try {
      for await (const r of client.streamAggregatedResources(requests(), { signal: abort.signal })) {
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
      pending.push(create(DiscoveryRequestSchema, req));
      wake?.();
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
      closed = true;
      wake?.();
      abort.abort();
    },
  };
}
