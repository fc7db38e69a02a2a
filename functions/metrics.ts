/**
 * GET /metrics on a hono app, runtime-neutral: the mesh core's Prometheus text exposition
 * (lib/metrics), authenticated like every read path (XDS_AUTH: 401 without credentials).
 */
import type { Hono } from "hono";
import type { XdsGuard } from "../lib/auth/guard.ts";
import { exposition } from "../lib/metrics/index.ts";
import { restAuth } from "./auth.ts";

/** Adds GET /metrics; `expose` gives the exposition (the core's registry, or the Durable Object's). */
export function mountMetrics(app: Hono, guard: XdsGuard, expose: () => Promise<string>): void {
  app.get("/metrics", restAuth(guard), async (c) =>
    c.body(await expose(), 200, { "content-type": exposition }),
  );
}
