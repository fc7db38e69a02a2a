/**
 * Cloudflare Workers entry. For now it only answers readiness and exports the MeshStore Durable
 * Object class that wrangler.toml binds as MESH; the xDS and ingest routes mount here later.
 */
import type { MeshStore } from "./mesh-store.ts";

export { MeshStore } from "./mesh-store.ts";

/** Bindings and vars from wrangler.toml. */
export interface Env {
  MESH: DurableObjectNamespace<MeshStore>;
  PILOT_DEBOUNCE_AFTER: string;
  PILOT_DEBOUNCE_MAX: string;
  PILOT_ENABLE_EDS_DEBOUNCE: string;
  DOMAIN_SUFFIX: string;
  CLUSTER_ID: string;
}

/** `GET /ready` answers 200 {"ready":true}; anything else is a 404 that names the request. */
export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/ready") return Response.json({ ready: true });
    return Response.json({ error: `no route for ${request.method} ${pathname}` }, { status: 404 });
  },
} satisfies ExportedHandler<Env>;
