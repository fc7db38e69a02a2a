/**
 * The direct gRPC path of ADS (functions/node/ads-h2.ts) on a real node:http2 server with the real
 * ADS handlers, driven by a raw node:http2 client so the framing is ours to choose: a message split
 * across DATA frames, several messages in one frame, a message over the limit, a compressed flag
 * without an encoding, gzip, an unknown encoding, a half-closed client, and what goes to connect.
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  createServer,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
} from "node:http2";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmission } from "../../functions/admission.ts";
import { grpcStatusMessage, serveAdsH2 } from "../../functions/node/ads-h2.ts";
import { createChangeFeed } from "../../lib/core/change-feed.ts";
import { DiscoveryRequestSchema } from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { createXdsServer } from "../../lib/xds/server.ts";
import { decodeChecked } from "../support/xds-check.ts";
import { CDS, EDS, node } from "./delta/mesh.ts";

const SOTW = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const readMaxBytes = 4096;

function frame(data: Uint8Array, flags = 0): Buffer {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(data.length, 1);
  return Buffer.concat([h, data]);
}
const request = (typeUrl: string, first = true) =>
  toBinary(
    DiscoveryRequestSchema,
    create(DiscoveryRequestSchema, first ? { node: node("h2"), typeUrl } : { typeUrl }),
  );

/** What a raw stream received: the response type URLs, the status and message, in order. */
interface Seen {
  typeUrls: string[];
  status?: string;
  message?: string;
  headers?: IncomingHttpHeaders;
}

let server: Http2Server;
let port: number;
let session: ClientHttp2Session;
const fallbackPaths: string[] = [];
const serverSessions = new Set<Http2Session>();

beforeAll(async () => {
  const core = { store: createMemoryStore(), feed: createChangeFeed(() => {}) };
  const { ads } = createXdsServer(core, { log: () => {} });
  server = createServer();
  serveAdsH2(
    server,
    {
      ads,
      admission: createAdmission({ ratePerSecond: 10_000 }),
      authenticate: async () => ({ ok: true, identity: { method: "none", subject: "anonymous" } }),
      readMaxBytes,
    },
    (req, res) => {
      fallbackPaths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
      res.writeHead(404);
      res.end();
    },
  );
  server.on("session", (s) => {
    serverSessions.add(s);
    s.on("close", () => serverSessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  session = connect(`http://127.0.0.1:${port}`);
});
afterAll(async () => {
  session?.destroy();
  for (const s of serverSessions) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Opens a stream; resolves `ended` with what it saw once the server closed it. */
function open(headers: Record<string, string> = {}, path = SOTW) {
  const stream = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
    ...headers,
  });
  const seen: Seen = { typeUrls: [] };
  let buf = Buffer.alloc(0);
  let got: (() => void) | undefined;
  stream.on("response", (h: IncomingHttpHeaders) => {
    seen.headers = h;
    take(h);
  });
  stream.on("trailers", take);
  stream.on("data", (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const len = buf.readUInt32BE(1);
      seen.typeUrls.push(decodeChecked.sotw(buf.subarray(5, 5 + len)).typeUrl);
      buf = buf.subarray(5 + len);
      got?.();
    }
  });
  function take(h: IncomingHttpHeaders) {
    if (h["grpc-status"] !== undefined) seen.status = String(h["grpc-status"]);
    if (h["grpc-message"] !== undefined) seen.message = decodeURIComponent(String(h["grpc-message"]));
  }
  const ended = new Promise<Seen>((resolve) => stream.on("close", () => resolve(seen)));
  const status = new Promise<Seen>((resolve) => stream.on("trailers", () => resolve(seen)));
  stream.on("error", () => {});
  /** Resolves once `n` responses arrived in all. */
  const responses = (n: number) =>
    new Promise<void>((resolve) => {
      got = () => seen.typeUrls.length >= n && resolve();
      got();
    });
  return { stream, seen, ended, status, responses };
}

const write = (s: ClientHttp2Stream, b: Uint8Array) =>
  new Promise<void>((resolve) => s.write(b, () => resolve()));

describe("ADS on node:http2 (ads-h2.ts)", () => {
  it("reads a message split across DATA frames", async () => {
    const s = open();
    const bytes = frame(request(CDS));
    for (const part of [bytes.subarray(0, 3), bytes.subarray(3, 9), bytes.subarray(9)])
      await write(s.stream, part);
    await s.responses(1);
    expect(s.seen.typeUrls).toEqual([CDS]);
    expect(s.seen.headers?.["content-type"]).toBe("application/grpc+proto");
    s.stream.close();
  });

  it("reads several messages from one DATA frame, answering each in order", async () => {
    const s = open();
    s.stream.write(Buffer.concat([frame(request(CDS)), frame(request(EDS, false))]));
    await s.responses(2);
    expect(s.seen.typeUrls).toEqual([CDS, EDS]);
    s.stream.close();
  });

  it("ends the stream with OK once a half-closed client was answered", async () => {
    const s = open();
    s.stream.end(frame(request(CDS)));
    const seen = await s.ended;
    expect(seen).toMatchObject({ typeUrls: [CDS], status: "0" });
  });

  const refusals: {
    name: string;
    headers: Record<string, string>;
    body: Buffer;
    status: string;
    message: string;
  }[] = [
    {
      name: "a message over the limit, from its prefix",
      headers: {},
      body: Buffer.from([0, 0, 0, 0x10, 0x01]), // declares 4097 bytes
      status: "8",
      message: `message size 4097 is larger than configured readMaxBytes ${readMaxBytes}`,
    },
    {
      name: "a compressed flag with identity encoding",
      headers: {},
      body: frame(gzipSync(request(CDS)), 1),
      status: "13",
      message: "received compressed envelope, but do not know how to decompress",
    },
    {
      name: "an encoding it does not know (grpc-accept-encoding names what it takes)",
      headers: { "grpc-encoding": "snappy" },
      body: frame(request(CDS)),
      status: "12",
      message: 'unknown compression "snappy": supported encodings are gzip,br',
    },
    {
      name: "a malformed grpc-timeout",
      headers: { "grpc-timeout": "soon" },
      body: frame(request(CDS)),
      status: "3",
      message: "protocol error: invalid grpc timeout value: soon",
    },
    {
      name: "a half-closed client inside a message",
      headers: {},
      body: frame(request(CDS)).subarray(0, 8),
      status: "3",
      message: "protocol error: incomplete envelope",
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} with connect's status and message`, async () => {
      const s = open(r.headers);
      s.stream.end(r.body);
      const seen = await s.ended;
      expect(seen.typeUrls).toEqual([]);
      expect([seen.status, seen.message]).toEqual([r.status, r.message]);
    });
  }

  it("writes grpc-message as gRPC does: printable ASCII as it is, so grpc-js's decodeURI reads it whole", async () => {
    const s = open({ "grpc-encoding": "snappy" });
    let raw: unknown;
    s.stream.on("trailers", (h: IncomingHttpHeaders) => {
      raw = h["grpc-message"];
    });
    s.stream.end(frame(request(CDS)));
    await s.ended;
    expect(raw).toBe('unknown compression "snappy": supported encodings are gzip,br');
    expect(decodeURI(String(raw))).toBe(raw);
  });

  it("percent-encodes only '%' and bytes outside printable ASCII in grpc-message (UTF-8)", () => {
    expect(grpcStatusMessage("100% of é, a\nb")).toBe("100%25 of %C3%A9, a%0Ab");
    expect(decodeURIComponent(grpcStatusMessage("100% of é, a\nb"))).toBe("100% of é, a\nb");
  });

  it("decompresses a gzip request (grpc-encoding: gzip) and answers identity", async () => {
    const s = open({ "grpc-encoding": "gzip" });
    s.stream.end(frame(gzipSync(request(CDS)), 1));
    const seen = await s.ended;
    expect(seen).toMatchObject({ typeUrls: [CDS], status: "0" });
    expect(seen.headers?.["grpc-encoding"]).toBeUndefined();
  });

  it("ends the stream with DEADLINE_EXCEEDED once grpc-timeout passed", async () => {
    const s = open({ "grpc-timeout": "200m" });
    s.stream.write(frame(request(CDS)));
    await s.responses(1);
    // The trailers end the server's side; the client still holds its own open.
    const seen = await s.status;
    expect(seen).toMatchObject({ typeUrls: [CDS], status: "4" });
  });

  it("hands every other request to connect: other paths, other content types, other methods", async () => {
    fallbackPaths.length = 0;
    for (const [path, type] of [
      ["/envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters", "application/grpc"],
      [SOTW, "application/grpc+json"],
      [SOTW, "application/grpc-web+proto"],
      [SOTW, "application/connect+proto"],
    ] as const) {
      const s = open({ "content-type": type }, path);
      s.stream.end();
      await s.ended;
    }
    expect(fallbackPaths).toEqual([
      "POST /envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters application/grpc",
      `POST ${SOTW} application/grpc+json`,
      `POST ${SOTW} application/grpc-web+proto`,
      `POST ${SOTW} application/connect+proto`,
    ]);
  });
});
