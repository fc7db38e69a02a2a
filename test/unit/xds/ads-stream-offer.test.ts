/**
 * pumpAdsStream over requests that hand messages over at once (OfferingRequests: the direct gRPC
 * reader, functions/node/grpc-messages.ts): a plain request reaching an idle stream is answered by
 * requestNow inside the transport's own call, checked once; one it declines takes its turn in the
 * loop (checked once, handled once, in order); a refused one ends the stream with its error.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createMessageReader } from "../../../functions/node/grpc-messages.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createPushSignal } from "../../../lib/push/signal.ts";
import { pumpAdsStream, type StreamSession } from "../../../lib/xds/ads-stream.ts";

const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** A gRPC-framed DiscoveryRequest naming `nonce`. */
function framed(nonce: string): Uint8Array {
  const body = toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { responseNonce: nonce }));
  const out = new Uint8Array(5 + body.length);
  new DataView(out.buffer).setUint32(1, body.length);
  out.set(body, 5);
  return out;
}

describe("pumpAdsStream with OfferingRequests", () => {
  it("answers plain requests in the transport's call, declined ones in their turn, each checked once; a refusal ends it", async () => {
    const reader = createMessageReader({
      schema: DiscoveryRequestSchema,
      readMaxBytes: 1024,
      compression: null,
      pause() {},
      resume() {},
    });
    const handled: string[] = [];
    const checked: string[] = [];
    const session: StreamSession<DiscoveryRequest, string> = {
      async onRequest(req) {
        handled.push(`req:${req.responseNonce}`);
        return [`req:${req.responseNonce}`];
      },
      async onPush() {
        return [];
      },
      // "ack-*" is plain: answered at once; anything else needs the loop.
      requestNow(req) {
        if (!req.responseNonce.startsWith("ack")) return undefined;
        handled.push(`now:${req.responseNonce}`);
        return [`now:${req.responseNonce}`];
      },
    };
    const sent: string[] = [];
    const done = pumpAdsStream(
      reader,
      session,
      createPushSignal(),
      new AbortController().signal,
      (r) => {
        sent.push(r);
      },
      (req) => {
        checked.push(req.responseNonce);
        return req.responseNonce === "bad" ? new Error("refused bad") : undefined;
      },
    );
    await settle();
    reader.push(framed("ack-1"));
    // Answered inside push(): no promise settled, no turn of the event loop.
    expect(sent).toEqual(["now:ack-1"]);
    reader.push(framed("sub-2"));
    await settle();
    reader.push(framed("ack-3"));
    expect(handled).toEqual(["now:ack-1", "req:sub-2", "now:ack-3"]);
    expect(checked).toEqual(["ack-1", "sub-2", "ack-3"]);
    expect(sent).toEqual(["now:ack-1", "req:sub-2", "now:ack-3"]);
    reader.push(framed("bad"));
    await expect(done).rejects.toThrow("refused bad");
    expect(checked).toEqual(["ack-1", "sub-2", "ack-3", "bad"]);
  });
});
