/**
 * The xDS Connect routes, runtime-neutral: SotW and Delta ADS streams (where the runtime has a
 * push signal), Envoy's unary Fetch RPCs for polling, and edgepilot's StatusService.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { createProxyStatusRecorder, proxyStatusWriteIntervalMs } from "../lib/core/proxy-status.ts";
import { StatusService } from "../lib/gen/edgepilot/v1/status_pb.ts";
import { ClusterDiscoveryService } from "../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { AggregatedDiscoveryService } from "../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DiscoveryRequest,
} from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { EndpointDiscoveryService } from "../lib/gen/envoy/service/endpoint/v3/eds_pb.ts";
import { ListenerDiscoveryService } from "../lib/gen/envoy/service/listener/v3/lds_pb.ts";
import { RouteDiscoveryService } from "../lib/gen/envoy/service/route/v3/rds_pb.ts";
import type { ResourceChange } from "../lib/push/flush.ts";
import type { PushSignal } from "../lib/push/signal.ts";
import { publishedStatus } from "../lib/push/status.ts";
import type { SyncTracker } from "../lib/push/sync-tracker.ts";
import type { Store } from "../lib/store/index.ts";
import { defaultMaxResponseBytes, ResponseTooLargeError } from "../lib/xds/budget.ts";
import { createDeltaSession } from "../lib/xds/delta.ts";
import { type AdsLimits, checkDeltaRequest, defaultAdsLimits } from "../lib/xds/delta-limits.ts";
import { fetchDiscovery } from "../lib/xds/fetch.ts";
import { nodeIdProblem } from "../lib/xds/proxy-record.ts";
import { xdsRegistry } from "../lib/xds/registry.ts";
import { createSotwSession } from "../lib/xds/sotw.ts";
import { createStoreSource } from "../lib/xds/source.ts";
import { openGate } from "../lib/xds/sync-gate.ts";
import { TypeUrl } from "../lib/xds/types.ts";
import { runAdsStream, type StreamHooks } from "./ads-stream.ts";

export interface XdsDeps {
  store: Store;
  /** Push announcements; without one (Workers), streaming ADS answers Unimplemented. */
  pushes?: PushSignal;
  /** Aborted on shutdown: open streams end cleanly. */
  shutdown?: AbortSignal;
  log: (line: string) => void;
  /** ADS limits; each one omitted takes its default (defaultAdsLimits). */
  limits?: Partial<AdsLimits>;
  /** Start-up sync: the gate every read path obeys, and the state StatusService shows. */
  sync?: Pick<SyncTracker, "synced" | "state">;
  /** EDGEPILOT_MAX_REQUEST_BYTES: the largest request message (a router may also set it for all). */
  maxRequestBytes?: number;
  /** EDGEPILOT_MAX_RESPONSE_BYTES: the response byte budget (default lib/xds/budget.ts's). */
  maxResponseBytes?: number;
}

/** Registers the xDS services on a Connect router. */
export function createXdsRoutes(deps: XdsDeps): (router: ConnectRouter) => void {
  const source = createStoreSource(deps.store);
  const gate = deps.sync ?? openGate;
  const maxResponseBytes = deps.maxResponseBytes ?? defaultMaxResponseBytes;
  const fetch = async (typeUrl: TypeUrl, req: DiscoveryRequest) => {
    const result = await tooLargeIsExhausted(async () =>
      fetchDiscovery(source, typeUrl, req, await gate.synced(), maxResponseBytes),
    );
    if (result.kind === "invalid") throw new ConnectError(result.message, Code.InvalidArgument);
    if (result.kind === "unsynced") throw new ConnectError(result.message, Code.Unavailable);
    return result.response;
  };
  // Only when given: an undefined readMaxBytes here would override the router's own limit.
  const options = {
    jsonOptions: { registry: xdsRegistry },
    ...(deps.maxRequestBytes === undefined ? {} : { readMaxBytes: deps.maxRequestBytes }),
  };
  const limits: AdsLimits = { ...defaultAdsLimits, ...deps.limits };
  let openStreams = 0;
  /**
   * The hooks of one ADS stream: counts it for its whole life; over maxStreams, refuses it before
   * it starts; an answer too large to cut ends it with ResourceExhausted; `closed` runs at its end.
   */
  const streamHooks = (closed: () => void): StreamHooks => ({
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
      closed();
    },
    mapError: exhausted,
  });
  return (router) => {
    router.service(ClusterDiscoveryService, { fetchClusters: (req) => fetch(TypeUrl.cluster, req) }, options);
    router.service(
      EndpointDiscoveryService,
      { fetchEndpoints: (req) => fetch(TypeUrl.endpoint, req) },
      options,
    );
    router.service(
      ListenerDiscoveryService,
      { fetchListeners: (req) => fetch(TypeUrl.listener, req) },
      options,
    );
    router.service(RouteDiscoveryService, { fetchRoutes: (req) => fetch(TypeUrl.route, req) }, options);
    router.service(StatusService, {
      async getStatus() {
        const s = await publishedStatus(deps.store);
        const sync = await deps.sync?.state();
        return create(StatusService.method.getStatus.output, {
          pushVersion: BigInt(s.pushVersion),
          pendingPushes: s.pendingPushes,
          types: s.types,
          sync: sync ?? { synced: true, published: true },
        });
      },
    });
    const { pushes } = deps;
    if (!pushes) return;
    router.service(
      AggregatedDiscoveryService,
      {
        streamAggregatedResources(requests, ctx) {
          const status = createProxyStatusRecorder({
            store: deps.store,
            log: deps.log,
            minIntervalMs: proxyStatusWriteIntervalMs,
          });
          const session = createSotwSession({
            source,
            gate,
            onStatus: status.record,
            maxResponseBytes,
            log: deps.log,
          });
          const signal = deps.shutdown ? AbortSignal.any([ctx.signal, deps.shutdown]) : ctx.signal;
          const types = new Set<string>();
          const check = (req: DiscoveryRequest) =>
            nodeIdError(req.node?.id) ??
            typeUrlsError(types, req.typeUrl, limits.maxTypeUrlsPerStream) ??
            (req.resourceNames.length > limits.maxNamesPerRequest
              ? new ConnectError(
                  `${req.resourceNames.length} resource_names for ${req.typeUrl || "(no type_url)"}; at most ` +
                    `${limits.maxNamesPerRequest} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
                  Code.ResourceExhausted,
                )
              : undefined);
          // A push naming its changes touches only those names (EDS/RDS answer just them).
          const handlers = {
            onRequest: session.onRequest,
            onPush: (changed?: readonly ResourceChange[]) => session.onPush(undefined, changed),
          };
          const hooks = streamHooks(() => void status.close());
          return runAdsStream(requests, handlers, pushes, signal, check, hooks);
        },
        deltaAggregatedResources(requests, ctx) {
          const status = createProxyStatusRecorder({
            store: deps.store,
            log: deps.log,
            minIntervalMs: proxyStatusWriteIntervalMs,
          });
          const session = createDeltaSession({
            source,
            gate,
            onStatus: status.record,
            maxResponseBytes,
            log: deps.log,
          });
          const signal = deps.shutdown ? AbortSignal.any([ctx.signal, deps.shutdown]) : ctx.signal;
          const check = (req: DeltaDiscoveryRequest) => {
            const badNode = nodeIdError(req.node?.id);
            if (badNode) return badNode;
            const problem = checkDeltaRequest(req, limits, session.subscribed(req.typeUrl));
            if (!problem) return undefined;
            const code = problem.code === "invalid-argument" ? Code.InvalidArgument : Code.ResourceExhausted;
            return new ConnectError(problem.message, code);
          };
          const changeAware = {
            onRequest: session.onRequest,
            onPush: (changed?: readonly ResourceChange[]) => session.onPush(undefined, changed),
          };
          const hooks = streamHooks(() => void status.close());
          return runAdsStream(requests, changeAware, pushes, signal, check, hooks);
        },
      },
      options,
    );
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
function exhausted(e: unknown): unknown {
  return e instanceof ResponseTooLargeError ? new ConnectError(e.message, Code.ResourceExhausted) : e;
}

async function tooLargeIsExhausted<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw exhausted(e);
  }
}
