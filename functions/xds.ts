/**
 * The xDS Connect routes, runtime-neutral, over one xDS server (lib/xds/server.ts): SotW and Delta
 * ADS streams (where the host serves them), Envoy's unary Fetch RPCs for polling, and edgepilot's
 * StatusService. Refusals become Connect codes through functions/ads-errors.ts.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { StatusService } from "../lib/gen/edgepilot/v1/status_pb.ts";
import { AggregatedDiscoveryService } from "../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import type { DiscoveryRequest } from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { type TypeUrl, xdsTypes } from "../lib/resources/xds-types.ts";
import type { AdsHandlers } from "../lib/xds/ads-handlers.ts";
import { pulled } from "../lib/xds/ads-stream.ts";
import { xdsRegistry } from "../lib/xds/registry.ts";
import type { XdsServer } from "../lib/xds/server.ts";
import { toConnectError } from "./ads-errors.ts";

/** Which of the server's pieces the routes serve. */
export interface XdsRoutesOptions {
  /**
   * The ADS methods, when this host serves streaming ADS over Connect (Node: the server's own, shared
   * with its direct HTTP/2 path). Absent (the Worker, Lambda): AggregatedDiscoveryService is not
   * registered, so a call answers Unimplemented.
   */
  ads?: AdsHandlers;
}

/** Registers the xDS services on a Connect router; every message is bounded by EDGEPILOT_MAX_REQUEST_BYTES. */
export function createXdsRoutes(
  server: XdsServer,
  routes: XdsRoutesOptions = {},
): (router: ConnectRouter) => void {
  const fetch = async (typeUrl: TypeUrl, req: DiscoveryRequest) => {
    const result = await server.fetch(typeUrl, req).catch((e: unknown) => {
      throw toConnectError(e);
    });
    if (result.kind === "invalid") throw new ConnectError(result.message, Code.InvalidArgument);
    if (result.kind === "unsynced") throw new ConnectError(result.message, Code.Unavailable);
    return result.response;
  };
  const options = {
    jsonOptions: { registry: xdsRegistry },
    readMaxBytes: server.settings.limits.maxRequestBytes,
  };
  const { ads } = routes;
  return (router) => {
    // Envoy's unary Fetch RPC of every served type (lib/resources/xds-types.ts names each one).
    for (const t of xdsTypes)
      router.service(
        t.fetch.service,
        { [t.fetch.method]: (req: DiscoveryRequest) => fetch(t.typeUrl, req) },
        options,
      );
    router.service(StatusService, {
      async getStatus() {
        const { published: s, sync } = await server.status();
        return create(StatusService.method.getStatus.output, {
          pushVersion: BigInt(s.pushVersion),
          pendingPushes: s.pendingPushes,
          types: s.types,
          sync: sync ?? { synced: true, published: true },
        });
      },
    });
    if (!ads) return;
    // connect pulls the responses from a generator; a refusal ends the stream with its Connect code.
    router.service(
      AggregatedDiscoveryService,
      {
        streamAggregatedResources: (requests, ctx) =>
          pulled((signal, send) => ads.sotw(requests, signal, send).catch(rethrow), ctx.signal),
        deltaAggregatedResources: (requests, ctx) =>
          pulled((signal, send) => ads.delta(requests, signal, send).catch(rethrow), ctx.signal),
      },
      options,
    );
  };
}

function rethrow(e: unknown): never {
  throw toConnectError(e);
}
