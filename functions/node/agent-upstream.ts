/**
 * The agent's one upstream connection: a Delta ADS stream (gRPC over HTTP/2, h2c or TLS) to a Node
 * edgepilot, on node:http2 directly. One HTTP/2 session per stream attempt; a PING every
 * `pingEveryMs` finds an upstream that went away without closing (a partition, a dead node), so a
 * slow or silent upstream ends the stream instead of holding it forever. The stream reports its end
 * once, with its gRPC status as connect names it ("unauthenticated", "unavailable", ...).
 */
import { type ClientHttp2Session, connect } from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { UpstreamRequest } from "../../lib/agent/machine.ts";
import {
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../lib/gen/google/rpc/status_pb.ts";
import { describeConnectError } from "./agent-tls.ts";
import { createEnvelopeSplitter } from "./grpc-messages.ts";

const path = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

/** What the stream tells its driver; `ended` is called once, last. */
export interface UpstreamHandlers {
  connected(): void;
  response(res: DeltaDiscoveryResponse): void;
  ended(code: string, message: string): void;
}

/** One open upstream stream. */
export interface UpstreamStream {
  send(request: UpstreamRequest): void;
  /** Ends the stream and its connection; `ended` is not called after this. */
  close(): void;
}

/** Where the stream goes, with which token, and the largest response it takes. */
export interface UpstreamOptions {
  /** `http://host:port` (h2c) or `https://host:port` (TLS). */
  upstream: string;
  token: string | undefined;
  /** The largest response message taken (bytes). */
  readMaxBytes: number;
  pingEveryMs?: number;
  /** TLS options of an https:// upstream (functions/node/agent-tls.ts): the CA bundle, if any. */
  tls?: { ca?: string };
  /** EDGEPILOT_AGENT_CA_FILE, to name it when the upstream's certificate is not trusted. */
  caFile?: string | undefined;
}

/** Opens the Delta ADS stream; requests may be sent at once (HTTP/2 buffers them until connected). */
export function openUpstreamStream(options: UpstreamOptions, handlers: UpstreamHandlers): UpstreamStream {
  const session: ClientHttp2Session = connect(options.upstream, options.tls ?? {});
  let done = false;
  let status: { code: string; message: string } | undefined;
  const pinger = setInterval(() => {
    const timeout = setTimeout(() => end("unavailable", "the upstream did not answer a ping in 10s"), 10_000);
    try {
      session.ping((err) => {
        clearTimeout(timeout);
        if (err) end("unavailable", `ping failed: ${err.message}`);
      });
    } catch (e) {
      clearTimeout(timeout);
      end("unavailable", `ping failed: ${(e as Error).message}`);
    }
  }, options.pingEveryMs ?? 15_000);
  pinger.unref();
  const end = (code: string, message: string) => {
    if (done) return;
    done = true;
    clearInterval(pinger);
    session.destroy();
    handlers.ended(code, message);
  };
  session.on("error", (e) => end("unavailable", describeConnectError(e, options.caFile)));
  session.on("connect", () => {
    if (!done) handlers.connected();
  });
  const headers: Record<string, string> = {
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
    "user-agent": "edgepilot-agent",
  };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const stream = session.request(headers);
  const splitter = createEnvelopeSplitter(options.readMaxBytes);
  const statusOf = (h: Record<string, unknown>) => {
    const raw = h["grpc-status"];
    if (raw === undefined) return;
    const n = Number(raw);
    let message = String(h["grpc-message"] ?? "");
    try {
      message = decodeURIComponent(message);
    } catch {
      // keep it as it came
    }
    // OK ends a stream the server closed on purpose (a shutdown): still a stream to reopen.
    if (n === 0) status = { code: "ok", message: message || "the upstream ended the stream" };
    else status = { code: n in Code ? codeToString(n as Code) : `status ${raw}`, message };
  };
  stream.on("response", (h) => {
    const code = Number(h[":status"]);
    if (code !== 200) {
      // A Worker (or any host without ADS) answers 404: say which setting reaches it.
      const hint =
        code === 404 ? " (no ADS there: for the Worker set EDGEPILOT_AGENT_UPSTREAM_PROTOCOL=watch)" : "";
      status = { code: "unavailable", message: `HTTP status ${code} from the upstream${hint}` };
    } else statusOf(h);
  });
  stream.on("trailers", (h) => statusOf(h));
  stream.on("data", (chunk: Buffer) => {
    if (done) return;
    try {
      for (const m of splitter.decode(chunk)) {
        if (m.flags !== 0) throw new Error("a compressed or unknown message (the agent asks for none)");
        handlers.response(fromBinary(DeltaDiscoveryResponseSchema, m.data));
        if (done) return;
      }
    } catch (e) {
      end("internal", `bad response from the upstream: ${(e as Error).message}`);
    }
  });
  stream.on("error", (e) => end("unavailable", describeConnectError(e, options.caFile)));
  stream.on("close", () =>
    end(status?.code ?? "unavailable", status?.message ?? "the upstream closed the stream"),
  );
  return {
    send(request) {
      if (done) return;
      const message = create(DeltaDiscoveryRequestSchema, {
        typeUrl: request.typeUrl,
        resourceNamesSubscribe: request.subscribe,
        initialResourceVersions: request.initialVersions,
        responseNonce: request.responseNonce,
        ...(request.node && { node: request.node }),
        ...(request.error && { errorDetail: create(StatusSchema, request.error) }),
      });
      const body = toBinary(DeltaDiscoveryRequestSchema, message);
      const framed = new Uint8Array(body.length + 5);
      new DataView(framed.buffer).setUint32(1, body.length);
      framed.set(body, 5);
      stream.write(framed);
    },
    close() {
      if (done) return;
      done = true;
      clearInterval(pinger);
      stream.close();
      session.close();
      setTimeout(() => session.destroy(), 1000).unref();
    },
  };
}
