/**
 * The xDS Connect routes, runtime-neutral: SotW and Delta ADS streams (where the runtime has a
 * push signal), Envoy's unary Fetch RPCs for polling, and edgepilot's StatusService.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { StatusService } from "../lib/gen/edgepilot/v1/status_pb.ts";
import { ClusterDiscoveryService } from "../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { AggregatedDiscoveryService } from "../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import type { DiscoveryRequest } from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { EndpointDiscoveryService } from "../lib/gen/envoy/service/endpoint/v3/eds_pb.ts";
import { ListenerDiscoveryService } from "../lib/gen/envoy/service/listener/v3/lds_pb.ts";
import { RouteDiscoveryService } from "../lib/gen/envoy/service/route/v3/rds_pb.ts";
import type { PushSignal } from "../lib/push/signal.ts";
import { publishedStatus } from "../lib/push/status.ts";
import type { SyncTracker } from "../lib/push/sync-tracker.ts";
import { openGate } from "../lib/resources/sync-gate.ts";
import { TypeUrl } from "../lib/resources/xds-types.ts";
import type { Store } from "../lib/store/index.ts";
import { defaultMaxResponseBytes } from "../lib/xds/budget.ts";
import type { AdsLimits } from "../lib/xds/delta-limits.ts";
import { fetchDiscovery } from "../lib/xds/fetch.ts";
import { xdsRegistry } from "../lib/xds/registry.ts";
import { createStoreSource } from "../lib/xds/source.ts";
import { createViews, type Views } from "../lib/xds/view-source.ts";
import { type AdsHandlers, createAdsHandlers, exhausted } from "./ads-handlers.ts";
import { pulled } from "./ads-stream.ts";

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
  /** The ADS methods when another transport serves them too (Node's direct HTTP/2 path): one stream count. */
  ads?: AdsHandlers;
  /** The host's per-namespace views; default: views over `store` that re-read the table per call. */
  views?: Views;
}

/** Registers the xDS services on a Connect router. */
export function createXdsRoutes(deps: XdsDeps): (router: ConnectRouter) => void {
  const source = createStoreSource(deps.store);
  const views = deps.views ?? createViews({ store: deps.store, cache: false });
  const gate = deps.sync ?? openGate;
  const maxResponseBytes = deps.maxResponseBytes ?? defaultMaxResponseBytes;
  const fetch = async (typeUrl: TypeUrl, req: DiscoveryRequest) => {
    const result = await tooLargeIsExhausted(async () =>
      fetchDiscovery(
        views.source(await views.forNode(req.node), source),
        typeUrl,
        req,
        await gate.synced(),
        maxResponseBytes,
      ),
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
  // The ADS methods: given (shared with another transport) or built here when pushes exist.
  const ads =
    deps.ads ?? (deps.pushes ? createAdsHandlers({ ...deps, pushes: deps.pushes, views }) : undefined);
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
    if (!ads) return;
    router.service(
      AggregatedDiscoveryService,
      {
        // connect pulls the responses from a generator.
        streamAggregatedResources: (requests, ctx) =>
          pulled((signal, send) => ads.sotw(requests, signal, send), ctx.signal),
        deltaAggregatedResources: (requests, ctx) =>
          pulled((signal, send) => ads.delta(requests, signal, send), ctx.signal),
      },
      options,
    );
  };
}

async function tooLargeIsExhausted<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw exhausted(e);
  }
}
