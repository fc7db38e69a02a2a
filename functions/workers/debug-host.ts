/**
 * The /debug/* paths inside the MeshStore Durable Object: the Worker authenticates each request
 * (XDS_AUTH) and forwards it as one call (functions/debug.ts mountDebugForward); here they read
 * the object's own SQL store through its xDS server, behind the identity the Worker forwarded.
 */
import { Hono } from "hono";
import type { XdsServer } from "../../lib/xds/server.ts";
import { forwardedDebugAuth, mountDebug } from "../debug.ts";

/** The debug app over the object's xDS server; other paths answer 404. */
export function createDebugHost(server: Pick<XdsServer, "debug">): Hono {
  const app = new Hono();
  mountDebug(app, server.debug, forwardedDebugAuth);
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}
