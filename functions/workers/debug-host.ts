/**
 * The /debug/* paths inside the MeshStore Durable Object: the Worker authenticates each request
 * (XDS_AUTH) and forwards it as one call (functions/debug.ts mountDebugForward); here they read
 * the object's own SQL store, behind the identity the Worker forwarded.
 */
import { Hono } from "hono";
import type { MeshCore } from "../../lib/core/mesh-core.ts";
import { createViews, sidecarViewOptions } from "../../lib/xds/view-source.ts";
import { forwardedDebugAuth, mountDebug } from "../debug.ts";

/** The debug app over `core`'s store; other paths answer 404. */
export function createDebugHost(core: MeshCore, registry?: Parameters<typeof sidecarViewOptions>[0]): Hono {
  const app = new Hono();
  // Views re-read their table's head on every lookup here (one small value): debug calls are rare.
  const views = createViews({
    store: core.store,
    cache: false,
    ...(registry && sidecarViewOptions(registry)),
  });
  mountDebug(
    app,
    {
      store: core.store,
      views,
      now: () => Date.now(),
      instance: async () => (await core.sync.state()).instance,
    },
    forwardedDebugAuth,
  );
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}
