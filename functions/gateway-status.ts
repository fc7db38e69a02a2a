/**
 * GET /v1/gateway-status?cluster=<id>: the Gateway API statuses edgepilot's gateway controller
 * computes, for the relay to write to the objects' status subresources. Behind the ingest token
 * (mounted on the ingest app, so the same guard answers 401), with an ETag over the body so a relay
 * polling an unchanged mesh is answered 304 with nothing to read.
 */
import type { Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { clusterIdRule, isClusterId } from "../lib/config.ts";
import type { GatewayApiStatus } from "../lib/registry/gateway-api/gateway-status.ts";
import { loadGatewayApi } from "../lib/registry/gateway-api/index.ts";
import { resourceVersion } from "../lib/resources/version.ts";
import type { Store } from "../lib/store/index.ts";

/** The path the relay polls. */
export const gatewayStatusPath = "/v1/gateway-status";

/** Computes the statuses of `cluster`'s Gateway API objects from the store (the gateway translation binds it). */
export type GatewayStatuses = (store: Store, options: { cluster: string }) => Promise<GatewayApiStatus[]>;

/** Where the answer comes from: the mesh's store and the function that reads statuses out of it. */
export interface GatewayStatusOptions {
  store: Store;
  statuses: GatewayStatuses;
}

/**
 * The one place the hosts (Node, the Durable Object, the ingest Lambda) take their statuses from:
 * the Gateway API translation over the host's store (lib/registry/gateway-api), read at each ask.
 */
export function gatewayStatusOver(
  store: Store,
  domainSuffix: string,
): { gatewayStatus: GatewayStatusOptions } {
  return {
    gatewayStatus: { store, statuses: async (s) => (await loadGatewayApi(s, { domainSuffix })).statuses },
  };
}

/** The answer's body. */
export interface GatewayStatusAnswer {
  statuses: GatewayApiStatus[];
}

/**
 * Mounts the route on `app`, which must already guard `/v1/*` with the ingest token (createIngestApp
 * does). Statuses are sorted by group, resource, namespace and name, so one mesh gives one body and
 * one ETag whatever order they were computed in.
 */
export function mountGatewayStatus(app: Hono, options: GatewayStatusOptions, defaultCluster: string): void {
  app.get(gatewayStatusPath, async (c) => {
    const cluster = c.req.query("cluster") ?? defaultCluster;
    if (!isClusterId(cluster))
      throw new HTTPException(400, { message: `cluster ${JSON.stringify(cluster)}: ${clusterIdRule}` });
    const statuses = [...(await options.statuses(options.store, { cluster }))].sort(byObject);
    const body = JSON.stringify({ statuses } satisfies GatewayStatusAnswer);
    const etag = `"${await resourceVersion(new TextEncoder().encode(body))}"`;
    c.header("etag", etag);
    c.header("cache-control", "no-cache");
    if (matches(c, etag)) return c.body(null, 304);
    return c.body(body, 200, { "content-type": "application/json" });
  });
}

/** Whether If-None-Match names `etag` (a list, weak validators and `*` as RFC 9110 reads them). */
function matches(c: Context, etag: string): boolean {
  const header = c.req.header("if-none-match");
  if (header === undefined) return false;
  return header.split(",").some((t) => {
    const tag = t.trim();
    return tag === "*" || tag === etag || tag === `W/${etag}`;
  });
}

function byObject(a: GatewayApiStatus, b: GatewayApiStatus): number {
  const key = (s: GatewayApiStatus) => [s.group, s.resource, s.namespace ?? "", s.name];
  const [x, y] = [key(a), key(b)];
  for (let i = 0; i < x.length; i++) {
    const [p, q] = [x[i] as string, y[i] as string];
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}
