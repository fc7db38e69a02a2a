/**
 * The attacks of issue 7 §2 on XDS_PORT, each with real clients (@grpc/grpc-js, connect-node,
 * node:http2) and bounded in count and time, on 127.0.0.1 only. Each returns what it observed.
 */
import { connect as h2connect } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openDelta } from "../delta/delta-client.ts";
import { CDS, node } from "../delta/mesh.ts";

export const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService";
export const SOTW_PATH = `${ADS}/StreamAggregatedResources`;
export const DELTA_PATH = `${ADS}/DeltaAggregatedResources`;

/** A gRPC length-prefixed message (uncompressed). */
export function grpcFrame(message: Uint8Array): Buffer {
  const h = Buffer.alloc(5);
  h.writeUInt32BE(message.length, 1);
  return Buffer.concat([h, message]);
}

/** A SotW CDS wildcard request with no nonce: the server answers every one of them. */
export const cdsRequest = (pod = "attacker") =>
  toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { node: node(pod), typeUrl: CDS }));

/** How the streams of an attack ended, by gRPC code name ("answered" for a first response). */
export type Outcomes = Record<string, number>;
const count = (o: Outcomes, k: string) => {
  o[k] = (o[k] ?? 0) + 1;
};

/**
 * Opens `total` Delta streams, `parallel` at a time, each sending one request built by `req`,
 * and tallies how each went: "answered" or the code it ended with; `messages` keeps one message per code.
 */
export async function shortStreams(
  xdsPort: number,
  total: number,
  parallel: number,
  req: (i: number) => Parameters<ReturnType<typeof openDelta>["send"]>[0],
): Promise<{ outcomes: Outcomes; messages: Record<string, string> }> {
  const outcomes: Outcomes = {};
  const messages: Record<string, string> = {};
  let next = 0;
  async function worker() {
    while (next < total) {
      const i = next++;
      const s = openDelta(xdsPort);
      s.send(req(i));
      const r = await s.next(3000);
      const end = r ? undefined : await s.ended(100);
      s.close();
      const key = r ? "answered" : end ? Code[end.code] : "no answer";
      count(outcomes, key);
      if (end) messages[key] ??= end.rawMessage;
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker));
  return { outcomes, messages };
}

/**
 * Opens `total` SotW streams on ONE @grpc/grpc-js channel (one HTTP/2 connection), each asking for
 * every cluster. Resolves with a handle once the server has answered what it will within `settleMs`.
 */
export async function manyStreamsOneChannel(xdsPort: number, total: number, settleMs = 1500) {
  const client = new grpc.Client(`127.0.0.1:${xdsPort}`, grpc.credentials.createInsecure());
  const calls: grpc.ClientDuplexStream<Uint8Array, Buffer>[] = [];
  const answered = new Set<number>();
  const errors: Outcomes = {};
  const request = cdsRequest("many-streams");
  for (let i = 0; i < total; i++) {
    const call = client.makeBidiStreamRequest(
      SOTW_PATH,
      (m: Uint8Array) => Buffer.from(m),
      (b: Buffer) => b,
    );
    call.on("data", () => answered.add(i));
    call.on("error", (e: grpc.ServiceError) => count(errors, grpc.status[e.code] ?? String(e.code)));
    call.write(request);
    calls.push(call);
  }
  await new Promise((r) => setTimeout(r, settleMs));
  return {
    answered: () => answered.size,
    errors,
    close() {
      for (const c of calls) c.cancel();
      client.close();
    },
  };
}

/** A raw node:http2 connection with one SotW ADS stream open on it; errors are the caller's to observe. */
function openRawSotw(xdsPort: number) {
  const session = h2connect(`http://127.0.0.1:${xdsPort}`);
  session.on("error", () => {});
  const stream = session.request({
    ":method": "POST",
    ":path": SOTW_PATH,
    "content-type": "application/grpc",
    te: "trailers",
  });
  return { session, stream };
}

/**
 * Sends one gRPC message whose prefix declares `declaredBytes` on a raw node:http2 stream, then
 * streams zeros as fast as flow control lets it (at most `maxSend` bytes, `ms` in all), and reports
 * the server's answer and how much of the body it took.
 */
export function oversizedMessage(xdsPort: number, declaredBytes: number, maxSend: number, ms = 3000) {
  return new Promise<{ grpcStatus: string | undefined; message: string; sent: number }>((resolve) => {
    const { session, stream } = openRawSotw(xdsPort);
    let status: string | undefined;
    let message = "";
    let sent = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      session.destroy();
      resolve({ grpcStatus: status, message, sent });
    };
    const timer = setTimeout(finish, ms);
    const take = (h: Record<string, unknown>) => {
      if (h["grpc-status"] !== undefined) status = String(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) message = decodeURIComponent(String(h["grpc-message"]));
      if (status !== undefined) finish();
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("error", () => {});
    stream.on("close", finish);
    const header = Buffer.alloc(5);
    header.writeUInt32BE(declaredBytes, 1);
    stream.write(header);
    const chunk = Buffer.alloc(64 * 1024);
    const pump = () => {
      while (!done && sent < maxSend) {
        sent += chunk.length;
        if (!stream.write(chunk)) return void stream.once("drain", pump);
      }
    };
    pump();
  });
}

/**
 * A client that keeps sending requests the server answers, on one raw node:http2 stream, and never
 * reads a response. Writes only when the transport takes more (as a real sender does); resolves
 * once writing has been blocked for `stuckMs`, with the bytes the server let it send.
 */
export async function nonReadingSender(xdsPort: number, maxSend: number, stuckMs = 1000) {
  const { session, stream } = openRawSotw(xdsPort);
  stream.on("error", () => {});
  stream.pause(); // never read: what the server sends piles up in our window, then stops
  const frame = grpcFrame(cdsRequest("non-reader"));
  let sent = 0;
  for (;;) {
    while (sent < maxSend && stream.write(frame)) sent += frame.length;
    if (sent >= maxSend) break;
    sent += frame.length;
    const drained = await new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), stuckMs);
      stream.once("drain", () => {
        clearTimeout(t);
        resolve(true);
      });
    });
    if (!drained) break;
  }
  return { sent, close: () => session.destroy() };
}

/** Whether an error is a ConnectError with `code` (for assertions on refused calls). */
export const isCode = (e: unknown, code: Code) => e instanceof ConnectError && e.code === code;
