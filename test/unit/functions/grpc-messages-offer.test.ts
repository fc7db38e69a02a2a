/**
 * The reader's synchronous hand-over (functions/node/grpc-messages.ts offerTo): while the consumer
 * waits, each plain message is parsed, checked and offered at once, in order; a taken one settles
 * no read, a declined one is the next read, a compressed one is read as ever, and one that fails
 * to parse or pass its check makes the next read throw.
 */
import { gzipSync } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { createMessageReader } from "../../../functions/node/grpc-messages.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { frame, join, request } from "./grpc-frames.ts";

/** A reader whose consumer takes the messages `takes` says yes to; records the transport and the offers. */
function offering(takes: (typeUrl: string) => boolean, check?: (typeUrl: string) => void) {
  const flow: string[] = [];
  const offered: string[] = [];
  const r = createMessageReader({
    schema: DiscoveryRequestSchema,
    readMaxBytes: 1024,
    compression: compressionGzip,
    check: (m) => check?.((m as DiscoveryRequest).typeUrl),
    pause: () => flow.push("pause"),
    resume: () => flow.push("resume"),
  });
  r.offerTo((m) => {
    offered.push(m.typeUrl);
    return takes(m.typeUrl);
  });
  return { r, flow, offered, it: r[Symbol.asyncIterator]() };
}

/** Whether `p` is still pending after the microtasks queued now ran. */
async function pending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return !settled;
}

describe("createMessageReader offerTo", () => {
  it("offers nothing while no read waits: a message then waits for its read, the transport paused", async () => {
    const { r, flow, offered, it: iter } = offering(() => true);
    r.push(frame(request("a")));
    expect(offered).toEqual([]);
    expect(flow).toEqual(["pause"]);
    expect((await iter.next()).value.typeUrl).toBe("a");
  });

  it("hands taken messages over at once, in order, the read still waiting and the transport flowing", async () => {
    const { r, flow, offered, it: iter } = offering(() => true);
    const read = iter.next();
    r.push(join(frame(request("a")), frame(request("b"))));
    r.push(frame(request("c")));
    expect(offered).toEqual(["a", "b", "c"]);
    expect(flow).toEqual([]);
    expect(await pending(read)).toBe(true);
    r.end();
    expect(await read).toEqual({ done: true, value: undefined });
  });

  it("makes a declined message the next read, and offers nothing more until it was read", async () => {
    const { r, offered, it: iter } = offering((t) => t !== "b");
    const read = iter.next();
    r.push(join(frame(request("a")), frame(request("b")), frame(request("c"))));
    expect(offered).toEqual(["a", "b"]);
    expect((await read).value.typeUrl).toBe("b");
    expect((await iter.next()).value.typeUrl).toBe("c"); // read as ever, not offered
    expect(offered).toEqual(["a", "b"]);
    const later = iter.next();
    r.push(frame(request("d")));
    expect(offered).toEqual(["a", "b", "d"]);
    expect(await pending(later)).toBe(true);
  });

  it("reads a compressed message as ever (decompressed by its read), after the plain ones before it", async () => {
    const { r, offered, it: iter } = offering(() => true);
    const read = iter.next();
    r.push(join(frame(request("a")), frame(gzipSync(request("z")), 1)));
    expect(offered).toEqual(["a"]);
    expect((await read).value.typeUrl).toBe("z");
  });

  it("fails the next read with a message's check refusal or parse error, offering nothing after it", async () => {
    const refused = offering(
      () => true,
      (t) => {
        if (t === "bad") throw new ConnectError("not this one", Code.PermissionDenied);
      },
    );
    const read = refused.it.next();
    refused.r.push(join(frame(request("a")), frame(request("bad")), frame(request("c"))));
    expect(refused.offered).toEqual(["a"]);
    const e = await read.then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect([e?.code, e?.rawMessage]).toEqual([Code.PermissionDenied, "not this one"]);

    const garbage = offering(() => true);
    const read2 = garbage.it.next();
    garbage.r.push(frame(new Uint8Array([0xff, 0xff, 0xff])));
    const e2 = await read2.then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(e2?.code).toBe(Code.Internal);
    expect(e2?.rawMessage).toMatch(/^parse binary: /);
  });
});
