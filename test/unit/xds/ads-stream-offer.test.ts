/**
 * pumpAdsStream over requests that hand messages over at once (OfferingRequests: the direct gRPC
 * reader, functions/node/grpc-messages.ts): a request reaching an idle stream is handed to the
 * session inside the transport's own call, checked once, and written there when the session
 * answers at once; one arriving while the stream is busy is declined and takes its turn in the
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
  it("hands requests over in the transport's call while idle, declined ones in their turn, each checked once; a refusal ends it", async () => {
    const reader = createMessageReader({
      schema: DiscoveryRequestSchema,
      readMaxBytes: 1024,
      compression: null,
      pause() {},
      resume() {},
    });
    const handled: string[] = [];
    const checked: string[] = [];
    // "sub-*" waits for `release` (the session reads its store); the rest is answered at once.
    let release: (() => void) | undefined;
    const session: StreamSession<DiscoveryRequest, string> = {
      onRequest(req) {
        if (!req.responseNonce.startsWith("sub")) {
          handled.push(`now:${req.responseNonce}`);
          return [`now:${req.responseNonce}`];
        }
        handled.push(`req:${req.responseNonce}`);
        return new Promise<string[]>((resolve) => {
          release = () => resolve([`req:${req.responseNonce}`]);
        });
      },
      onPush() {
        return [];
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
    // Handed over inside push() too; its answer comes later, and the stream is busy until then.
    reader.push(framed("sub-2"));
    expect(handled).toEqual(["now:ack-1", "req:sub-2"]);
    // Declined while busy: it waits its turn behind sub-2's answer.
    reader.push(framed("ack-3"));
    await settle();
    expect(handled).toEqual(["now:ack-1", "req:sub-2"]);
    release?.();
    await settle();
    expect(handled).toEqual(["now:ack-1", "req:sub-2", "now:ack-3"]);
    expect(checked).toEqual(["ack-1", "sub-2", "ack-3"]);
    expect(sent).toEqual(["now:ack-1", "req:sub-2", "now:ack-3"]);
    // Idle again: answered inside push().
    reader.push(framed("ack-4"));
    expect(sent.at(-1)).toBe("now:ack-4");
    reader.push(framed("bad"));
    await expect(done).rejects.toThrow("refused bad");
    expect(checked).toEqual(["ack-1", "sub-2", "ack-3", "ack-4", "bad"]);
  });
});
