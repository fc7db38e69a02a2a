/**
 * The agent's local ADS methods: the server's own (lib/xds/ads-handlers.ts over the cache, built by lib/xds/server.ts), with
 * each proxy's requests read on the way in. A node claiming another namespace ends its stream
 * (PermissionDenied, saying why); every subscription is added to the upstream's; a NACK is handed
 * on (the session still records it, and answers exactly as the server would).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type Ask, deltaAsk, sotwAsk } from "../../lib/agent/demand.ts";
import { localNodeProblem } from "../../lib/agent/local-node.ts";
import type { Node } from "../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { logWarn } from "../../lib/log/line-log.ts";
import type { AdsHandlers } from "../../lib/xds/ads-handlers.ts";

/** A local proxy's NACK, as handed upstream. */
export interface LocalNack {
  nodeId: string;
  typeUrl: string;
  code: number;
  message: string;
}

/** What the tap checks local nodes against, and where it hands their asks and NACKs. */
export interface LocalTapOptions {
  /** POD_NAMESPACE: the namespace every local node must claim. */
  namespace: string;
  log: (line: string) => void;
  /** A local proxy asked for `ask` (its node is the stream's). */
  demand: (node: Node, ask: Ask) => void;
  nack: (nack: LocalNack) => void;
}

interface AnyRequest {
  node?: Node | undefined;
  typeUrl: string;
  responseNonce: string;
  errorDetail?: { code: number; message: string } | undefined;
}

/** `ads` with every local stream's requests tapped (see the file's comment). */
export function tapLocalStreams(ads: AdsHandlers, options: LocalTapOptions): AdsHandlers {
  return {
    sotw: (requests, signal, send) =>
      ads.sotw(
        tap(requests, (req) => sotwAsk(req), options),
        signal,
        send,
      ),
    delta: (requests, signal, send) =>
      ads.delta(
        tap(requests, (req, first) => deltaAsk(req, first), options),
        signal,
        send,
      ),
  };
}

async function* tap<Req extends AnyRequest>(
  requests: AsyncIterable<Req>,
  ask: (req: Req, first: boolean) => Ask | undefined,
  options: LocalTapOptions,
): AsyncGenerator<Req> {
  let node: Node | undefined;
  const seen = new Set<string>();
  for await (const req of requests) {
    if (node === undefined && req.node !== undefined && req.node.id !== "") {
      const problem = localNodeProblem(req.node, options.namespace);
      if (problem) {
        logWarn(options.log, `agent: refused a local proxy: ${problem}`);
        throw new ConnectError(problem, Code.PermissionDenied);
      }
      node = req.node;
    }
    if (node !== undefined && req.typeUrl !== "") {
      const wanted = ask(req, !seen.has(req.typeUrl));
      seen.add(req.typeUrl);
      if (wanted) options.demand(node, wanted);
      if (req.errorDetail !== undefined && req.responseNonce !== "") {
        const { code, message } = req.errorDetail;
        options.nack({ nodeId: node.id, typeUrl: req.typeUrl, code, message });
      }
    }
    yield req;
  }
}
