/**
 * The two ADS stream methods (SotW and Delta), transport-neutral: each takes the proxy's requests,
 * a signal and a sink for the responses. The xDS server (server.ts) builds them once; connect's
 * router (functions/xds.ts) and Node's direct HTTP/2 gRPC path (functions/node/ads-h2.ts) serve the
 * same instance, so the per-instance stream limit and the request checks are one.
 *
 * A refused stream or request ends with an AdsRefusedError naming its gRPC code, and an answer too
 * large to cut with budget.ts's ResponseTooLargeError: lib/ imports no RPC framework (as Poll's
 * PollRefusedError and delta-limits.ts's problems), so the transports in functions/ map both to
 * Connect codes in one place (functions/ads-errors.ts).
 */
import type { XdsReporter } from "../core/hooks.ts";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { Push, PushSignal, ResourceChange } from "../resources/changes.ts";
import type { SyncGate } from "../resources/sync-gate.ts";
import { pumpAdsStream, type ResponseSink, type StreamHooks } from "./ads-stream.ts";
import { createConnectionLog, type StreamConnectionLog } from "./connection-log.ts";
import { createDeltaSession } from "./delta.ts";
import { type AdsLimits, checkDeltaRequest, type DeltaRequestProblem } from "./delta-limits.ts";
import { nodeIdProblem } from "./proxy-record.ts";
import type { ProxyStatusRecorder, ProxyStatusRecorders } from "./proxy-status.ts";
import { createSotwSession } from "./sotw.ts";
import type { ResourceSource } from "./source.ts";
import { streamReports } from "./stream-reports.ts";
import { createStreamView, type StreamView } from "./stream-view.ts";
import type { Views } from "./view-source.ts";

/** Why a stream or one of its requests was refused; `code` names the gRPC status the transport sends. */
export class AdsRefusedError extends Error {
  constructor(
    message: string,
    readonly code: DeltaRequestProblem["code"],
  ) {
    super(message);
    this.name = "AdsRefusedError";
  }
}

/** What the ADS methods are built from: every piece resolved by the xDS server (server.ts), no defaults here. */
export interface AdsDeps {
  /** The published resources every stream reads through its view. */
  source: ResourceSource;
  /** The host's per-namespace views (view-source.ts). */
  views: Views;
  pushes: PushSignal;
  /** Aborted on shutdown: open streams end cleanly. */
  shutdown?: AbortSignal;
  log: (line: string) => void;
  limits: AdsLimits;
  /** Start-up sync: the gate every read path obeys. */
  gate: SyncGate;
  /** EDGEPILOT_MAX_RESPONSE_BYTES: the response byte budget. */
  maxResponseBytes: number;
  /** Where every stream's status is recorded; absent: none is built (the agent). */
  statuses?: ProxyStatusRecorders;
  /** Where streams report opening, closing, responses, ACKs and NACKs: the mesh core's `xds` (metrics). */
  xds?: XdsReporter;
  /** The core's clock (ms): convergence and the connect/disconnect lines. */
  now: () => number;
}

/**
 * One ADS stream: the proxy's requests in, the responses handed to `send` (awaited when it returns
 * a promise), until the requests end or `signal` aborts; rejects with the error ending the stream.
 */
export type AdsMethod<Req, Res> = (
  requests: AsyncIterable<Req>,
  signal: AbortSignal,
  send: ResponseSink<Res>,
) => Promise<void>;

/** The ADS methods of one instance: every stream they run counts against one EDGEPILOT_MAX_STREAMS. */
export interface AdsHandlers {
  sotw: AdsMethod<DiscoveryRequest, DiscoveryResponse>;
  delta: AdsMethod<DeltaDiscoveryRequest, DeltaDiscoveryResponse>;
}

/** The recorder of a host that keeps no proxy status (no AdsDeps.statuses): sessions build none. */
const noStatus: ProxyStatusRecorder = { record() {}, close: async () => {} };

/**
 * Creates the ADS methods over `deps.source` and `deps.pushes`; they end with an AdsRefusedError
 * or a ResponseTooLargeError when they refuse (see the file's comment).
 */
export function createAdsHandlers(deps: AdsDeps): AdsHandlers {
  const { source, views, gate, maxResponseBytes, limits, pushes, now, statuses } = deps;
  let openStreams = 0;
  // One connect and one disconnect line per stream that got as far as a valid request.
  const connection = createConnectionLog({
    log: deps.log,
    now,
    streams: () => openStreams,
  });
  /**
   * The hooks of one ADS stream: counts it for its whole life; over maxStreams, refuses it before
   * it starts; `closed` runs at its end.
   */
  const streamHooks = (closed: () => void, conn: StreamConnectionLog): StreamHooks => ({
    open() {
      if (openStreams >= limits.maxStreams) {
        throw new AdsRefusedError(
          `this control plane instance already serves ${openStreams} ADS streams, its limit (EDGEPILOT_MAX_STREAMS); ` +
            "retry with backoff, connect to another instance, or raise the limit",
          "resource-exhausted",
        );
      }
      openStreams++;
    },
    close(opened) {
      if (opened) openStreams--;
      conn.closed();
      closed();
    },
  });
  // Every stream's status through one set of recorders: one write timer for all of them.
  const recorder = (): ProxyStatusRecorder => statuses?.recorder() ?? noStatus;
  // What every session of either kind is built with; `status` is its stream's recorder, `view` its
  // namespace's view of the published resources.
  const sessionOptions = (status: ProxyStatusRecorder, view: StreamView) => ({
    source: view.source,
    gate,
    ...(status !== noStatus && { onStatus: status.record }),
    maxResponseBytes,
    log: deps.log,
  });
  const withShutdown = (signal: AbortSignal) =>
    deps.shutdown ? AbortSignal.any([signal, deps.shutdown]) : signal;
  return {
    sotw(requests, signal, send) {
      const status = recorder();
      const view = createStreamView(views, source);
      const session = createSotwSession(sessionOptions(status, view));
      const types = new Set<string>();
      const reports = streamReports<DiscoveryResponse>("sotw", deps.xds, now);
      const check = (req: DiscoveryRequest) => {
        reports.request(req);
        return (
          nodeIdError(req.node?.id) ??
          typeUrlsError(types, req.typeUrl, limits.maxTypeUrlsPerStream) ??
          (req.resourceNames.length > limits.maxNamesPerRequest
            ? new AdsRefusedError(
                `${req.resourceNames.length} resource_names for ${req.typeUrl || "(no type_url)"}; at most ` +
                  `${limits.maxNamesPerRequest} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
                "resource-exhausted",
              )
            : undefined)
        );
      };
      // A push naming its changes touches only those names (EDS/RDS answer just them).
      const handlers = viewed(view, session);
      const conn = connection("sotw");
      const hooks = { ...streamHooks(() => closed(status, reports), conn), ...reports.hooks };
      return pumpAdsStream(
        requests,
        handlers,
        pushes,
        withShutdown(signal),
        reports.sink(send),
        noted(conn, check),
        hooks,
      );
    },
    delta(requests, signal, send) {
      const status = recorder();
      const view = createStreamView(views, source);
      const session = createDeltaSession(sessionOptions(status, view));
      const reports = streamReports<DeltaDiscoveryResponse>("delta", deps.xds, now);
      const check = (req: DeltaDiscoveryRequest) => {
        reports.request(req);
        const badNode = nodeIdError(req.node?.id);
        if (badNode) return badNode;
        const problem = checkDeltaRequest(req, limits, session.subscribed(req.typeUrl));
        return problem && new AdsRefusedError(problem.message, problem.code);
      };
      const changeAware = viewed(view, session);
      const conn = connection("delta");
      const hooks = { ...streamHooks(() => closed(status, reports), conn), ...reports.hooks };
      return pumpAdsStream(
        requests,
        changeAware,
        pushes,
        withShutdown(signal),
        reports.sink(send),
        noted(conn, check),
        hooks,
      );
    },
  };
}

/** A stream ended: its status record goes, and its reports say it closed. */
function closed(status: ProxyStatusRecorder, reports: { close(): void }): void {
  void status.close();
  reports.close();
}

/**
 * A session's stream handlers through its view: the first request's node binds the view before the
 * session reads anything; a push's changes are the ones that concern the view (none of another's).
 */
function viewed<Req extends { node?: Node | undefined }, Res>(
  view: StreamView,
  session: {
    onRequest(req: Req): Res[] | Promise<Res[]>;
    onPush(typeUrls: undefined, changed?: readonly ResourceChange[]): Res[] | Promise<Res[]>;
  },
) {
  return {
    onRequest(req: Req): Res[] | Promise<Res[]> {
      const binding = view.bind(req.node);
      return binding ? binding.then(() => session.onRequest(req)) : session.onRequest(req);
    },
    onPush(push: Push): Res[] | Promise<Res[]> {
      // The usual push takes its changes at once: the session may answer it at once too.
      const taken = view.push(push);
      return taken instanceof Promise
        ? taken.then((t) => session.onPush(undefined, t.changes))
        : session.onPush(undefined, taken.changes);
    },
  };
}

/** `check`, noting the node of each request it accepts: the stream's first logs its connection. */
function noted<Req extends { node?: Node | undefined }>(
  conn: StreamConnectionLog,
  check: (req: Req) => AdsRefusedError | undefined,
): (req: Req) => AdsRefusedError | undefined {
  return (req) => {
    const error = check(req);
    if (!error) conn.connected(req.node?.id);
    return error;
  };
}

/** A node id the stream cannot serve (too long for a status record, control characters) ▶ InvalidArgument. */
function nodeIdError(id: string | undefined): AdsRefusedError | undefined {
  const problem = id === undefined ? undefined : nodeIdProblem(id);
  return problem ? new AdsRefusedError(problem, "invalid-argument") : undefined;
}

/** A SotW request naming one type URL more than a stream may hold ▶ ResourceExhausted; else notes it. */
function typeUrlsError(seen: Set<string>, typeUrl: string, max: number): AdsRefusedError | undefined {
  if (typeUrl === "" || seen.has(typeUrl)) return undefined;
  if (seen.size >= max) {
    return new AdsRefusedError(
      `this stream already asked for ${seen.size} type URLs, the most one stream may (a proxy needs ` +
        "CDS, EDS, LDS, RDS and a few more); open another stream for more",
      "resource-exhausted",
    );
  }
  seen.add(typeUrl);
  return undefined;
}
