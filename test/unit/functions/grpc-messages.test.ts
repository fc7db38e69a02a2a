/**
 * The request side of the direct gRPC path (functions/node/grpc-messages.ts): messages cut any way
 * across DATA chunks, several in one chunk, a prefix over readMaxBytes, a compressed flag, a
 * truncated stream, and the pull-based contract (the transport paused while a message waits).
 */
import { gzipSync } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { createEnvelopeSplitter, createMessageReader } from "../../../functions/node/grpc-messages.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { frame, join, request } from "./grpc-frames.ts";

/** Cuts `bytes` at the given offsets. */
const cut = (bytes: Uint8Array, at: number[]) =>
  [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length));

describe("createEnvelopeSplitter", () => {
  const two = join(frame(request("a")), frame(request("bb")));
  const cases = [
    { name: "both messages in one chunk", chunks: [two] },
    {
      name: "one byte at a time",
      chunks: cut(
        two,
        Array.from({ length: two.length - 1 }, (_, i) => i + 1),
      ),
    },
    { name: "cut inside the first prefix", chunks: cut(two, [2]) },
    { name: "cut between prefix and body", chunks: cut(two, [5]) },
    { name: "cut inside the first body and the second prefix", chunks: cut(two, [7, 12]) },
    { name: "with empty chunks", chunks: [new Uint8Array(0), ...cut(two, [3]), new Uint8Array(0)] },
  ];
  for (const c of cases) {
    it(`yields both messages whole and in order: ${c.name}`, () => {
      const s = createEnvelopeSplitter(1024);
      const got = c.chunks.flatMap((chunk) => s.decode(chunk));
      expect(got.map((e) => Buffer.from(e.data).toString("hex"))).toEqual([
        Buffer.from(request("a")).toString("hex"),
        Buffer.from(request("bb")).toString("hex"),
      ]);
      expect(s.pending).toBe(0);
    });
  }

  it("reports bytes held of an incomplete message", () => {
    const s = createEnvelopeSplitter(1024);
    expect(s.decode(frame(request("a")).subarray(0, 6))).toEqual([]);
    expect(s.pending).toBe(6);
  });

  it("refuses a message over readMaxBytes from its prefix alone (connect's message)", () => {
    const s = createEnvelopeSplitter(10);
    const prefix = new Uint8Array([0, 0, 0, 0, 11]);
    expect(() => s.decode(prefix)).toThrow(
      new ConnectError("message size 11 is larger than configured readMaxBytes 10", Code.ResourceExhausted),
    );
  });

  it("takes a message of exactly readMaxBytes and an empty one", () => {
    const s = createEnvelopeSplitter(3);
    const got = s.decode(join(frame(new Uint8Array([1, 2, 3])), frame(new Uint8Array(0))));
    expect(got.map((e) => e.data.length)).toEqual([3, 0]);
  });
});

/** A reader with a recording transport. */
function reader(overrides: Partial<Parameters<typeof createMessageReader>[0]> = {}) {
  const flow: string[] = [];
  const seen: { typeUrl: string; first: boolean }[] = [];
  const r = createMessageReader({
    schema: DiscoveryRequestSchema,
    readMaxBytes: 1024,
    compression: null,
    check: (m, first) => seen.push({ typeUrl: (m as DiscoveryRequest).typeUrl, first }),
    pause: () => flow.push("pause"),
    resume: () => flow.push("resume"),
    ...overrides,
  });
  return { r, flow, seen, it: r[Symbol.asyncIterator]() };
}

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => ConnectError.from(e),
  );
}

describe("createMessageReader", () => {
  it("hands out one message at a time, pausing the transport while one waits", async () => {
    const { r, flow, seen, it: iter } = reader();
    r.push(join(frame(request("a")), frame(request("b"))));
    expect(flow).toEqual(["pause"]);
    expect(seen).toEqual([]); // parsed only when asked for
    expect((await iter.next()).value.typeUrl).toBe("a");
    expect(flow).toEqual(["pause"]); // "b" still waits
    expect((await iter.next()).value.typeUrl).toBe("b");
    expect(flow).toEqual(["pause", "resume"]);
    expect(seen).toEqual([
      { typeUrl: "a", first: true },
      { typeUrl: "b", first: false },
    ]);
    const third = iter.next();
    r.push(frame(request("c")).subarray(0, 4));
    r.push(frame(request("c")).subarray(4));
    expect((await third).value.typeUrl).toBe("c");
    r.end();
    expect(await iter.next()).toEqual({ done: true, value: undefined });
  });

  it("keeps the transport flowing while each message goes straight to a waiting consumer", async () => {
    const { r, flow, it: iter } = reader();
    for (const typeUrl of ["a", "b", "c"]) {
      const next = iter.next();
      r.push(frame(request(typeUrl)));
      expect((await next).value.typeUrl).toBe(typeUrl);
    }
    expect(flow).toEqual([]); // no pause/resume round per message
    r.push(join(frame(request("d")), frame(request("e"))));
    expect(flow).toEqual(["pause"]);
  });

  it("resumes a transport made paused at the first read, and only then", async () => {
    const { r, flow, it: iter } = reader({ paused: true });
    r.push(frame(request("a")));
    expect(flow).toEqual([]);
    expect((await iter.next()).value.typeUrl).toBe("a");
    expect(flow).toEqual(["resume"]);
  });

  it("ends cleanly when the client half-closes between messages", async () => {
    const { r, it: iter } = reader();
    const first = iter.next();
    r.push(frame(request("a")));
    r.end();
    expect((await first).value.typeUrl).toBe("a");
    expect((await iter.next()).done).toBe(true);
  });

  it("fails with InvalidArgument when the client half-closes inside a message", async () => {
    const { r, it: iter } = reader();
    r.push(frame(request("a")).subarray(0, 7));
    r.end();
    const e = await failure(iter.next());
    expect([e.code, e.rawMessage]).toEqual([Code.InvalidArgument, "protocol error: incomplete envelope"]);
  });

  it("serves the messages before one over the limit, then fails with ResourceExhausted", async () => {
    const { r, it: iter } = reader({ readMaxBytes: 100 });
    r.push(join(frame(request("a")), new Uint8Array([0, 0, 0, 0, 101])));
    expect((await iter.next()).value.typeUrl).toBe("a");
    const e = await failure(iter.next());
    expect([e.code, e.rawMessage]).toEqual([
      Code.ResourceExhausted,
      "message size 101 is larger than configured readMaxBytes 100",
    ]);
  });

  it("refuses a compressed flag without an encoding (Internal, as connect)", async () => {
    const { r, it: iter } = reader();
    r.push(frame(gzipSync(request("a")), 1));
    const e = await failure(iter.next());
    expect([e.code, e.rawMessage]).toEqual([
      Code.Internal,
      "received compressed envelope, but do not know how to decompress",
    ]);
  });

  it("decompresses gzip, bounded by readMaxBytes after decompression", async () => {
    const ok = reader({ compression: compressionGzip });
    ok.r.push(frame(gzipSync(request("a")), 1));
    expect((await ok.it.next()).value.typeUrl).toBe("a");
    const bomb = reader({ compression: compressionGzip, readMaxBytes: 1000 });
    bomb.r.push(frame(gzipSync(new Uint8Array(100_000)), 1));
    const e = await failure(bomb.it.next());
    expect(e.code).toBe(Code.ResourceExhausted);
    expect(e.rawMessage).toMatch(/larger than configured readMaxBytes 1000 after decompression/);
  });

  it("raises a header error at the first read, and a check's refusal at its message", async () => {
    const before = reader({ before: new ConnectError("bad timeout", Code.InvalidArgument) });
    before.r.push(frame(request("a")));
    expect((await failure(before.it.next())).rawMessage).toBe("bad timeout");
    const refused = reader({
      check: () => {
        throw new ConnectError("not you", Code.PermissionDenied);
      },
    });
    refused.r.push(frame(request("a")));
    expect((await failure(refused.it.next())).code).toBe(Code.PermissionDenied);
    expect(await refused.it.next()).toEqual({ done: true, value: undefined });
  });

  it("fails with Internal on bytes that are no DiscoveryRequest", async () => {
    const { r, it: iter } = reader();
    r.push(frame(new Uint8Array([0xff, 0xff, 0xff])));
    const e = await failure(iter.next());
    expect(e.code).toBe(Code.Internal);
    expect(e.rawMessage).toMatch(/^parse binary: /);
  });
});
