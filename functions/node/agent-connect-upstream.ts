/**
 * The agent's upstream over Connect (functions/node/agent-upstream.ts is the Delta ADS one; both
 * are an UpstreamStream to the driver): DeltaPollService `Watch`, a server stream per type URL, or
 * long-polled `Poll`, with @connectrpc/connect-node's real Connect protocol (binary), to a Node
 * edgepilot or the Worker. One session = one HTTP/2 connection (h2c for http://, ALPN h2 for
 * https://) carrying every type's call, PINGed every 15 s so a silent upstream ends it; or, over
 * HTTP/1.1, one keep-alive agent (a connection per call in flight). Each `send` (re)starts its type's
 * call with the request the machine built (the whole subscription and what the cache holds), so a
 * call replaced or closed never reports again. The session ends once, at the first call that fails
 * or ends, with its status as connect names it; a Watch that ends without Connect's end-of-stream
 * message was cut (unavailable), and a Watch whose first answer (which the server sends at once)
 * does not come within `firstAnswerMs` is held back by something between (deadline_exceeded).
 */
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { UpstreamRequest } from "../../lib/agent/requests.ts";
import { pollWaitMs, type UpstreamHttp } from "../../lib/agent/transport.ts";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../lib/gen/google/rpc/status_pb.ts";
import { describeConnectError } from "./agent-tls.ts";
import type { UpstreamHandlers, UpstreamStream } from "./agent-upstream.ts";

/** Where the calls go, over which HTTP version, with which token, Watch or Poll. */
export interface ConnectUpstreamOptions {
  /** `http://host:port` or `https://host:port`: a Node XDS_PORT (or PORT over HTTP/1.1), or the Worker. */
  upstream: string;
  http: UpstreamHttp;
  kind: "watch" | "poll";
  /** The token now: read at every call (a poll is a new call, and is checked anew by the upstream). */
  token: () => string | undefined;
  /** The largest response message taken (bytes). */
  readMaxBytes: number;
  /** A long poll's wait (default lib/agent/transport.ts pollWaitMs). */
  pollWaitMs?: number;
  /** A Watch without its first answer this long after it started is held back (default 10 s). */
  firstAnswerMs?: number;
  /** TLS options of an https:// upstream (functions/node/agent-tls.ts): the CA bundle, if any. */
  tls?: { ca?: string };
  /** EDGEPILOT_AGENT_CA_FILE, named when a certificate is not trusted. */
  caFile?: string | undefined;
}

/** Opens a session; calls start with the first `send` of each type. */
export function openConnectUpstream(
  options: ConnectUpstreamOptions,
  handlers: UpstreamHandlers,
): UpstreamStream {
  const { upstream, http, kind, readMaxBytes } = options;
  const waitMs = options.pollWaitMs ?? pollWaitMs;
  const firstAnswerMs = options.firstAnswerMs ?? 10_000;
  const sessionManager =
    http === "2"
      ? new Http2SessionManager(
          upstream,
          { pingIntervalMs: 15_000, pingTimeoutMs: 10_000 },
          options.tls ?? {},
        )
      : undefined;
  const agent =
    http === "1.1"
      ? upstream.startsWith("https:")
        ? new HttpsAgent({ keepAlive: true, ...options.tls })
        : new HttpAgent({ keepAlive: true })
      : undefined;
  const transport = sessionManager
    ? createConnectTransport({ baseUrl: upstream, httpVersion: "2", sessionManager, readMaxBytes })
    : createConnectTransport({ baseUrl: upstream, httpVersion: "1.1", nodeOptions: { agent }, readMaxBytes });
  const client = createClient(DeltaPollService, transport);
  const calls = new Map<string, AbortController>();
  let done = false;
  let connected = false;

  const shut = () => {
    done = true;
    for (const c of calls.values()) c.abort();
    calls.clear();
    sessionManager?.abort();
    agent?.destroy();
  };
  const end = (code: string, message: string) => {
    if (done) return;
    shut();
    handlers.ended(code, message);
  };
  const failed = (e: unknown) => {
    const err = ConnectError.from(e);
    if (err.code === Code.InvalidArgument && /missing EndStreamResponse/.test(err.rawMessage))
      return end("unavailable", "the Watch ended without an end-of-stream message: cut on the way");
    // A certificate the agent does not trust is said as such (agent-tls.ts); else connect's message.
    const cause = err.cause instanceof Error ? err.cause : undefined;
    const said = cause && describeConnectError(cause, options.caFile);
    end(codeToString(err.code), said !== undefined && said !== cause?.message ? said : err.rawMessage);
  };
  const callOptions = (signal: AbortSignal) => {
    const token = options.token();
    return {
      signal,
      headers: (token === undefined ? {} : { authorization: `Bearer ${token}` }) as Record<string, string>,
      onHeader: () => {
        if (connected || done) return;
        connected = true;
        handlers.connected();
      },
    };
  };

  async function watch(request: DeltaDiscoveryRequest, signal: AbortSignal) {
    const held = setTimeout(
      () =>
        end(
          "deadline_exceeded",
          `no first Watch answer within ${firstAnswerMs}ms: something between holds the stream back (a buffering proxy?)`,
        ),
      firstAnswerMs,
    );
    try {
      for await (const res of client.watch({ request }, callOptions(signal))) {
        clearTimeout(held);
        if (signal.aborted || done) return;
        handlers.response(res);
      }
      if (!signal.aborted) end("ok", "the upstream ended the Watch");
    } catch (e) {
      if (!signal.aborted) failed(e);
    } finally {
      clearTimeout(held);
    }
  }

  async function poll(request: DeltaDiscoveryRequest, signal: AbortSignal) {
    const wait = { seconds: BigInt(Math.floor(waitMs / 1000)), nanos: (waitMs % 1000) * 1_000_000 };
    try {
      // The deadline leaves the upstream room to answer an empty long poll in time.
      const res = await client.poll(
        { request, wait },
        { ...callOptions(signal), timeoutMs: waitMs + 15_000 },
      );
      if (!signal.aborted && !done) handlers.response(res);
    } catch (e) {
      if (!signal.aborted) failed(e);
    }
  }

  return {
    send(request: UpstreamRequest) {
      if (done) return;
      calls.get(request.typeUrl)?.abort();
      const call = new AbortController();
      calls.set(request.typeUrl, call);
      const message = create(DeltaDiscoveryRequestSchema, {
        typeUrl: request.typeUrl,
        resourceNamesSubscribe: request.subscribe,
        initialResourceVersions: request.initialVersions,
        ...(request.node && { node: request.node }),
        // A local proxy's NACK (lib/agent/nack.ts): this call carries it once.
        ...(request.error && { errorDetail: create(StatusSchema, request.error) }),
      });
      void (kind === "watch" ? watch : poll)(message, call.signal);
    },
    close() {
      if (!done) shut();
    },
  };
}
