/**
 * The two ADS stream methods (SotW and Delta), transport-neutral: each takes the proxy's requests,
 * a signal and a sink for the responses. connect's router (functions/xds.ts) and Node's direct
 * HTTP/2 gRPC path (functions/node/ads-h2.ts) serve the same instance, so the per-instance stream
 * limit, the request checks and the error mapping are one.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { XdsReporter } from "../lib/core/hooks.ts";
import {
  createProxyStatusRecorders,
  type ProxyStatusRecorder,
  proxyStatusWriteIntervalMs,
} from "../lib/core/proxy-status.ts";
import type { Node } from "../lib/gen/envoy/config/core/v3/base_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../lib/push/flush.ts";
import type { PushSignal } from "../lib/push/signal.ts";
import type { SyncTracker } from "../lib/push/sync-tracker.ts";
import type { Store } from "../lib/store/index.ts";
import { defaultMaxResponseBytes, ResponseTooLargeError } from "../lib/xds/budget.ts";
import { createConnectionLog, type StreamConnectionLog } from "../lib/xds/connection-log.ts";
import { createDeltaSession } from "../lib/xds/delta.ts";
import { type AdsLimits, checkDeltaRequest, defaultAdsLimits } from "../lib/xds/delta-limits.ts";
import { nodeIdProblem } from "../lib/xds/proxy-record.ts";
import { createSotwSession } from "../lib/xds/sotw.ts";
import { createStoreSource } from "../lib/xds/source.ts";
import { openGate } from "../lib/xds/sync-gate.ts";
import { createStreamView, createViews, type StreamView, type Views } from "../lib/xds/view-source.ts";
import { pumpAdsStream, type ResponseSink, type StreamHooks } from "./ads-stream.ts";
import { streamReports } from "./xds-reports.ts";

export interface AdsDeps {
  store: Store;
  pushes: PushSignal;
  /** Aborted on shutdown: open streams end cleanly. */
  shutdown?: AbortSignal;
  log: (line: string) => void;
  /** ADS limits; each one omitted takes its default (defaultAdsLimits). */
  limits?: Partial<AdsLimits>;
  /** Start-up sync: the gate every read path obeys. */
  sync?: Pick<SyncTracker, "synced">;
  /** EDGEPILOT_MAX_RESPONSE_BYTES: the response byte budget (default lib/xds/budget.ts's). */
  maxResponseBytes?: number;
  /** The host's per-namespace views (lib/xds/view-source.ts); default: views over `store`. */
  views?: Views;
  /**
   * False: no proxy status is built or stored (the agent: nothing reads its local streams' status,
   * and their NACKs reach the upstream's). Default true.
   */
  recordStatus?: boolean;
  /**
   * Least time between two writes of one stream's status record (ms); default
   * proxyStatusWriteIntervalMs (1 s). A host over a shared, billed store passes
   * sharedProxyStatusWriteIntervalMs.
   */
  statusIntervalMs?: number;
  /** Where streams report opening, closing, responses, ACKs and NACKs: the mesh core's `xds` (metrics). */
  xds?: XdsReporter;
  /** The core's clock (ms): convergence and the connect/disconnect lines; default Date.now. */
  now?: () => number;
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

/** The recorder of a host that keeps no proxy status (AdsDeps.recordStatus false): sessions build none. */
const noStatus: ProxyStatusRecorder = { record() {}, close: async () => {} };

/** Creates the ADS methods over `deps.store` and `deps.pushes`; errors they end with are ConnectErrors. */
export function createAdsHandlers(deps: AdsDeps): AdsHandlers {
  const source = createStoreSource(deps.store);
  const views = deps.views ?? createViews({ store: deps.store });
  const gate = deps.sync ?? openGate;
  const maxResponseBytes = deps.maxResponseBytes ?? defaultMaxResponseBytes;
  const limits: AdsLimits = { ...defaultAdsLimits, ...deps.limits };
  const { pushes } = deps;
  const now = deps.now ?? Date.now;
  let openStreams = 0;
  // One connect and one disconnect line per stream that got as far as a valid request.
  const connection = createConnectionLog({
    log: deps.log,
    now,
    streams: () => openStreams,
  });
  /**
   * The hooks of one ADS stream: counts it for its whole life; over maxStreams, refuses it before
   * it starts; an answer too large to cut ends it with ResourceExhausted; `closed` runs at its end.
   */
  const streamHooks = (closed: () => void, conn: StreamConnectionLog): StreamHooks => ({
    open() {
      if (openStreams >= limits.maxStreams) {
        throw new ConnectError(
          `this control plane instance already serves ${openStreams} ADS streams, its limit (EDGEPILOT_MAX_STREAMS); ` +
            "retry with backoff, connect to another instance, or raise the limit",
          Code.ResourceExhausted,
        );
      }
      openStreams++;
    },
    close(opened) {
      if (opened) openStreams--;
      conn.closed();
      closed();
    },
    mapError: exhausted,
  });
  // Every stream's status through one set of recorders: one write timer for all of them (none for
  // the agent, whose upstream keeps the status).
  const statuses =
    deps.recordStatus === false
      ? undefined
      : createProxyStatusRecorders({
          store: deps.store,
          log: deps.log,
          minIntervalMs: deps.statusIntervalMs ?? proxyStatusWriteIntervalMs,
        });
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
            ? new ConnectError(
                `${req.resourceNames.length} resource_names for ${req.typeUrl || "(no type_url)"}; at most ` +
                  `${limits.maxNamesPerRequest} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
                Code.ResourceExhausted,
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
        if (!problem) return undefined;
        const code = problem.code === "invalid-argument" ? Code.InvalidArgument : Code.ResourceExhausted;
        return new ConnectError(problem.message, code);
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
    onPush(changed?: readonly ResourceChange[]): Res[] | Promise<Res[]> {
      // The usual push takes its changes at once: the session may answer it at once too.
      const taken = view.push(changed);
      return taken instanceof Promise
        ? taken.then((t) => session.onPush(undefined, t.changes))
        : session.onPush(undefined, taken.changes);
    },
  };
}

/** `check`, noting the node of each request it accepts: the stream's first logs its connection. */
function noted<Req extends { node?: Node | undefined }>(
  conn: StreamConnectionLog,
  check: (req: Req) => ConnectError | undefined,
): (req: Req) => ConnectError | undefined {
  return (req) => {
    const error = check(req);
    if (!error) conn.connected(req.node?.id);
    return error;
  };
}

/** A node id the stream cannot serve (too long for a status record, control characters) ▶ InvalidArgument. */
function nodeIdError(id: string | undefined): ConnectError | undefined {
  const problem = id === undefined ? undefined : nodeIdProblem(id);
  return problem ? new ConnectError(problem, Code.InvalidArgument) : undefined;
}

/** A SotW request naming one type URL more than a stream may hold ▶ ResourceExhausted; else notes it. */
function typeUrlsError(seen: Set<string>, typeUrl: string, max: number): ConnectError | undefined {
  if (typeUrl === "" || seen.has(typeUrl)) return undefined;
  if (seen.size >= max) {
    return new ConnectError(
      `this stream already asked for ${seen.size} type URLs, the most one stream may (a proxy needs ` +
        "CDS, EDS, LDS, RDS and a few more); open another stream for more",
      Code.ResourceExhausted,
    );
  }
  seen.add(typeUrl);
  return undefined;
}

/** An answer over EDGEPILOT_MAX_RESPONSE_BYTES that cannot be cut ▶ ResourceExhausted with its message. */
export function exhausted(e: unknown): unknown {
  return e instanceof ResponseTooLargeError ? new ConnectError(e.message, Code.ResourceExhausted) : e;
}
