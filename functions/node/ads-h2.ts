/**
 * The two ADS bidi methods over gRPC (application/grpc, application/grpc+proto), served straight
 * on node:http2's raw streams (the server's 'stream' event) in front of connect-node: one stream
 * costs one message reader, one pumpAdsStream writing each response as it comes, instead of connect's chain
 * of async-iterable transforms per message, and no compatibility request/response pair (two more
 * stream layers every message passes through each way). Every other request (other paths,
 * Connect, gRPC-Web, JSON) goes to `fallback` through node's compatibility layer unchanged.
 *
 * It keeps what connect-node and the interceptors give these methods: the one admission bucket
 * (PILOT_MAX_REQUESTS_PER_SECOND), XDS_AUTH's authentication and node checks (same errors),
 * readMaxBytes, compressed requests (gzip and br as connect-node, its errors otherwise),
 * grpc-timeout (connect's parser and error), the same ADS handlers (stream limit, checks, error
 * mapping), gRPC status and message trailers (connect's setTrailerStatus), and backpressure: a
 * response is written only once the one before it drained, a request read only when the stream
 * asks for it. Responses are not compressed (gRPC lets a server answer identity whatever a client accepts).
 */
import type {
  Http2Server,
  Http2ServerRequest,
  Http2ServerResponse,
  IncomingHttpHeaders,
  ServerHttp2Stream,
} from "node:http2";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import {
  contentTypeProto,
  headerAcceptEncoding,
  headerEncoding,
  headerTimeout,
  parseContentType,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { createDeltaAckExpectations } from "../../lib/xds/ack-bytes.ts";
import type { AdsHandlers, AdsMethod } from "../../lib/xds/ads-handlers.ts";
import { encodeDeltaResponse, encodeSotwResponse } from "../../lib/xds/response-bytes.ts";
import { zeroDeltaRequest, zeroSotwRequest } from "../../lib/xds/zero-requests.ts";
import type { Admission } from "../admission.ts";
import { toConnectError } from "../ads-errors.ts";
import { type Authenticate, nodeChecker } from "../auth.ts";
import { createMessageReader } from "./grpc-messages.ts";

const service = "/envoy.service.discovery.v3.AggregatedDiscoveryService";

export interface AdsH2Options {
  ads: AdsHandlers;
  /** The bucket connect's admission interceptor uses too: one rate for the whole port. */
  admission: Admission;
  /** XDS_AUTH: who sent the stream, from its headers (functions/auth.ts). */
  authenticate: Authenticate;
  /** EDGEPILOT_MAX_REQUEST_BYTES: the largest request message, before and after decompression. */
  readMaxBytes: number;
  log?: (line: string) => void;
  /** Request encodings accepted (connect-node's default: gzip, br). */
  acceptCompression?: Compression[];
}

type Listener = (req: Http2ServerRequest, res: Http2ServerResponse) => void;
type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

interface Method<I extends DescMessage, O extends DescMessage> {
  name: string;
  input: I;
  output: O;
  run: AdsMethod<MessageShape<I>, MessageShape<O>>;
  /** A new zero request (zero-requests.ts): what each request is parsed into. */
  zero: () => MessageShape<I>;
  /** The response's bytes after `reserve` free bytes (response-bytes.ts: each resource encoded once). */
  encode: (response: MessageShape<O>, reserve: number) => Uint8Array;
  /** Optional, per stream: the plain ACKs of the responses it sent recognised by their bytes (ack-bytes.ts). */
  acks?: () => {
    sent(response: MessageShape<O>): void;
    recognise(bytes: Uint8Array): MessageShape<I> | undefined;
  };
}

/**
 * Serves the ADS gRPC methods on `server`'s raw streams and hands every other stream to `fallback`
 * through node's compatibility layer (as `createServer(fallback)` would). The compatibility layer's
 * own 'stream' listener, which node installs with the first 'request' listener, is taken off the
 * server and called only for the streams that are not ADS.
 */
export function serveAdsH2(server: Http2Server, options: AdsH2Options, fallback: Listener): void {
  const before = new Set(server.listeners("stream"));
  server.on("request", fallback);
  const compat = server.listeners("stream").filter((l) => !before.has(l)) as StreamListener[];
  for (const l of compat) server.off("stream", l);
  const ads = createAdsStreamListener(options);
  server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
    if (ads(stream, headers)) return;
    for (const l of compat) l.call(server, stream, headers, ...rest);
  });
}

/**
 * Returns a raw-stream handler that serves the ADS gRPC methods and answers true, or leaves the
 * stream alone and answers false (another path, another protocol).
 */
function createAdsStreamListener(
  options: AdsH2Options,
): (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean {
  const accept = options.acceptCompression ?? [compressionGzip, compressionBrotli];
  const route =
    <I extends DescMessage, O extends DescMessage>(method: Method<I, O>) =>
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) =>
      void serve(method, stream, headers, options, accept).catch((e: unknown) => {
        // Only writing the trailers can throw here (the stream went away meanwhile): nothing to answer.
        options.log?.(`xds: ${method.name} stream ended without its trailers: ${logSafe(String(e))}`);
      });
  const methods = new Map([
    [
      `${service}/StreamAggregatedResources`,
      route({
        name: "StreamAggregatedResources",
        input: DiscoveryRequestSchema,
        output: DiscoveryResponseSchema,
        zero: zeroSotwRequest,
        run: options.ads.sotw,
        encode: encodeSotwResponse,
      }),
    ],
    [
      `${service}/DeltaAggregatedResources`,
      route({
        name: "DeltaAggregatedResources",
        input: DeltaDiscoveryRequestSchema,
        output: DeltaDiscoveryResponseSchema,
        zero: zeroDeltaRequest,
        run: options.ads.delta,
        encode: encodeDeltaResponse,
        acks: createDeltaAckExpectations,
      }),
    ],
  ]);
  return (stream, headers) => {
    const path = headers[":path"];
    const serveAds =
      headers[":method"] === "POST" && path !== undefined
        ? methods.get(path.split("?", 1)[0] as string)
        : undefined;
    // gRPC binary only; JSON and every other protocol stay with connect.
    if (!serveAds || parseContentType(single(headers["content-type"]))?.binary !== true) return false;
    serveAds(stream, headers);
    return true;
  };
}

/** One ADS stream, from its headers to its trailers. */
async function serve<I extends DescMessage, O extends DescMessage>(
  method: Method<I, O>,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  options: AdsH2Options,
  accept: Compression[],
): Promise<void> {
  const abort = new AbortController();
  const onClose = () => abort.abort(new ConnectError("stream closed by the client", Code.Canceled));
  let aborted = false;
  abort.signal.addEventListener("abort", () => {
    aborted = true;
  });
  stream.once("close", onClose);
  // A reset or a failed write is reported here (and to the reader); without a listener it would throw.
  let reader: ReturnType<typeof createMessageReader<I>> | undefined;
  stream.on("error", (e) => reader?.fail(e));
  const header = (name: string) => single(headers[name.toLowerCase()]);
  const timeout = parseTimeout(header(headerTimeout), Number.MAX_SAFE_INTEGER);
  const deadline =
    timeout.timeoutMs === undefined || timeout.error
      ? undefined
      : setTimeout(
          () => abort.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
          timeout.timeoutMs,
        );
  const compression = compressionNegotiate(
    accept,
    header(headerEncoding),
    header(headerAcceptEncoding),
    headerAcceptEncoding,
  );
  let error: unknown;
  try {
    await options.admission.admit(abort.signal);
    const auth = await options.authenticate(webHeaders(headers));
    if (!auth.ok) throw new ConnectError(auth.message, Code.Unauthenticated);
    const checkNode = nodeChecker(auth.identity, method.name, options.log);
    const acks = method.acks?.();
    reader = createMessageReader({
      schema: method.input,
      zero: method.zero,
      ...(acks && { recognise: acks.recognise }),
      readMaxBytes: options.readMaxBytes,
      compression: compression.request,
      before: compression.error ?? timeout.error,
      check: (message, first) => checkNode(message, first ? "stream-first" : "stream-later"),
      pause: () => stream.pause(),
      resume: () => stream.resume(),
      paused: true,
    });
    const messages = reader;
    stream.pause();
    stream.on("data", (chunk: Buffer) => messages.push(chunk));
    stream.on("end", () => messages.end());
    // Each response is framed and written at once; only a full stream buffer makes the session wait.
    await method.run(messages, abort.signal, (response) => {
      if (aborted || stream.destroyed) return;
      if (!stream.headersSent) respond(stream);
      acks?.sent(response);
      if (!stream.write(frame(method.encode(response, prefixBytes)))) return drained(stream, abort.signal);
    });
  } catch (e) {
    // The server's refusals (stream limit, request checks, an answer too large) as Connect's.
    error = toConnectError(e);
    // Anything else is a fault of ours: the proxy is told INTERNAL, the log says what it was.
    if (!(error instanceof ConnectError) && !abort.signal.aborted)
      options.log?.(
        `xds: ${method.name} stream failed: ${logSafe(e instanceof Error ? (e.stack ?? e.message) : String(e))}`,
      );
  } finally {
    clearTimeout(deadline);
    stream.off("close", onClose);
  }
  finish(stream, error, abort.signal);
}

/** Sends the response headers; the trailers follow when the stream ends (finish). */
function respond(stream: ServerHttp2Stream): void {
  stream.respond({ ":status": 200, "content-type": contentTypeProto }, { waitForTrailers: true });
}

const prefixBytes = 5;

/** Fills the gRPC message prefix (flags 0: not compressed; big-endian length) into its reserved bytes. */
function frame(bytes: Uint8Array): Uint8Array {
  const length = bytes.length - prefixBytes;
  bytes[0] = 0;
  bytes[1] = length >>> 24;
  bytes[2] = (length >>> 16) & 255;
  bytes[3] = (length >>> 8) & 255;
  bytes[4] = length & 255;
  return bytes;
}

/** Ends the response with its status trailers (grpc-status, percent-encoded grpc-message) unless the stream is gone. */
function finish(stream: ServerHttp2Stream, error: unknown, signal: AbortSignal): void {
  if (stream.destroyed || stream.closed) return;
  const reason = signal.aborted ? signal.reason : undefined;
  // A deadline passed ends the stream with DEADLINE_EXCEEDED, as gRPC servers do.
  const status =
    error === undefined
      ? reason instanceof ConnectError && reason.code === Code.DeadlineExceeded
        ? reason
        : undefined
      : error instanceof ConnectError
        ? error
        : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
  if (!stream.headersSent) respond(stream);
  const trailers: Record<string, string> = {};
  setTrailerStatus(new Headers(), status).forEach((value, key) => {
    trailers[key] = value;
  });
  if (status) trailers["grpc-message"] = grpcStatusMessage(status.rawMessage);
  stream.once("wantTrailers", () => {
    if (!stream.destroyed) stream.sendTrailers(trailers);
  });
  stream.end();
}

/**
 * A grpc-message trailer as the gRPC HTTP/2 protocol writes it: UTF-8, every byte outside
 * printable ASCII (0x20-0x7E) and "%" itself percent-encoded, nothing else. connect's
 * setTrailerStatus uses encodeURIComponent, which also encodes ",", ":", "=" and ";", and grpc-js
 * decodes with decodeURI, which leaves those encoded: a proxyless client logged "bytes%2C over".
 */
export function grpcStatusMessage(message: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(message))
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}

/** Resolves once the stream drained, or closed / the stream was aborted. */
function drained(stream: ServerHttp2Stream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    stream.once("drain", done);
    stream.once("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

function single(v: string | string[] | undefined): string | null {
  return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
}

/** The request's headers as web Headers (what Authenticate reads); HTTP/2 pseudo-headers left out. */
function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith(":") || v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
  }
  return out;
}
