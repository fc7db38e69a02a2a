/**
 * What one ADS stream tells the core's hooks (lib/core/hooks.ts XdsReporter): opened (at its first
 * request, with its node's ISTIO_VERSION) and closed, each request's ACK or NACK, each response
 * handed to the transport with how long answering and sending took, and when every response a push
 * asked of it was handed over (convergence). Built once per stream; per push and per response it
 * keeps two numbers and a count, and builds nothing.
 */

import { seconds } from "../clock.ts";
import type { StreamKind, XdsReporter } from "../core/hooks.ts";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { ResponseSink, StreamHooks } from "./ads-stream.ts";

/** The request fields a report reads (SotW and Delta requests both have them). */
interface RequestLike {
  node?: Node | undefined;
  typeUrl: string;
  responseNonce: string;
  errorDetail?: unknown;
}

/** One stream's reports. */
export interface StreamReports<Res extends { typeUrl: string }> {
  /** Notes a request before it is checked: opens the stream at the first, counts ACKs and NACKs. */
  request(req: RequestLike): void;
  /** The StreamHooks timing answers (pumpAdsStream calls them around each session call). */
  readonly hooks: Pick<StreamHooks, "answer" | "answered">;
  /** The transport's sink, counting and timing each response. */
  sink(send: ResponseSink<Res>): ResponseSink<Res>;
  /** The stream ended: closes it if it was reported opened. */
  close(): void;
}

/** A reporter that reports nothing (a host without hooks). */
const silent: XdsReporter = {
  streamOpened() {},
  streamClosed() {},
  response() {},
  converged() {},
  ack() {},
  nack() {},
};

/**
 * Reports of one stream of `kind` to `xds` (none when absent); `now` is the core's clock (ms), the
 * one push start times are on.
 */
export function streamReports<Res extends { typeUrl: string }>(
  kind: StreamKind,
  xds: XdsReporter | undefined,
  now: () => number,
): StreamReports<Res> {
  const x = xds ?? silent;
  let version: string | undefined;
  // When the stream began answering its current input, and how many responses of a push are left.
  let answerStart = 0;
  let pushLeft = 0;
  return {
    request(req) {
      if (version === undefined) {
        const v = req.node?.metadata?.ISTIO_VERSION;
        version = typeof v === "string" ? v : "";
        x.streamOpened(kind, version);
      }
      if (req.errorDetail) x.nack(req.typeUrl);
      else if (req.responseNonce !== "") x.ack(req.typeUrl);
    },
    hooks: {
      answer() {
        answerStart = seconds();
      },
      answered(push, responses) {
        pushLeft = push ? responses : 0;
      },
    },
    sink(send) {
      const sent = (typeUrl: string, at: number) => {
        const end = seconds();
        x.response(typeUrl, end - answerStart, end - at);
        if (pushLeft > 0 && --pushLeft === 0) x.converged(now());
      };
      return (response) => {
        const at = seconds();
        const writing = send(response);
        if (!writing) return sent(response.typeUrl, at);
        // Only a response that must drain costs a closure.
        return writing.then(() => sent(response.typeUrl, at));
      };
    },
    close() {
      if (version !== undefined) x.streamClosed(kind, version);
    },
  };
}
