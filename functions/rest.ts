/**
 * REST-JSON xDS on a hono app, runtime-neutral: `POST /v3/discovery:{clusters,endpoints,listeners,routes}`
 * (lib/xds/rest.ts). Errors answer JSON `{ error }`: 400 for a bad request, 404 for another
 * /v3 path, 413 for a body over EDGEPILOT_MAX_REQUEST_BYTES, 503 (Retry-After: 1) while the
 * registry is not synced and the client holds a version that is not the current one.
 */
import type { Hono } from "hono";
import type { XdsGuard } from "../lib/auth/guard.ts";
import type { DiscoveryRequest } from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openGate, type SyncGate } from "../lib/resources/sync-gate.ts";
import type { Limits } from "../lib/xds/limits.ts";
import { answerRest, restPaths } from "../lib/xds/rest.ts";
import type { ResourceSource } from "../lib/xds/source.ts";
import type { Views } from "../lib/xds/view-source.ts";
import { restAuth } from "./auth.ts";
import { readUpTo } from "./body.ts";

/** Where REST reads resources from, and the limits it applies. */
export interface RestDeps {
  source: ResourceSource;
  /** The host's per-namespace views: each request reads `source` through its node's. */
  views: Views;
  limits: Pick<Limits, "maxNamesPerRequest" | "maxRequestBytes">;
  /** Start-up sync: a client holding a stale version gets 503 until it opens. */
  gate?: SyncGate;
  /** XDS_AUTH: 401 without credentials, 400/403 for a missing or foreign node. */
  guard: XdsGuard;
  /** Where a 403 (a verified caller asking as another namespace) is logged. */
  log?: (line: string) => void;
}

/** Adds the REST-JSON routes to `app`. */
export function mountRest(app: Hono, deps: RestDeps): void {
  const { maxRequestBytes } = deps.limits;
  const tooBig = `body over ${maxRequestBytes} bytes (EDGEPILOT_MAX_REQUEST_BYTES)`;
  app.use("/v3/*", restAuth(deps.guard));
  app.post("/v3/*", async (c) => {
    const path = safeDecode(c.req.path);
    const typeUrl = restPaths[path];
    if (!typeUrl)
      return c.json(
        { error: `no REST xDS at ${path}: POST one of ${Object.keys(restPaths).join(", ")}` },
        404,
      );
    if (Number(c.req.header("content-length") ?? 0) > maxRequestBytes) return c.json({ error: tooBig }, 413);
    const { bytes, more } = await readUpTo(c.req.raw, maxRequestBytes);
    if (more) return c.json({ error: tooBig }, 413);
    // Each request reads through the view of the node it names (after the node check).
    const source = async (req: DiscoveryRequest) =>
      deps.views.source(await deps.views.forNode(req.node), deps.source);
    const answer = await answerRest(source, typeUrl, new TextDecoder().decode(bytes), {
      maxNames: deps.limits.maxNamesPerRequest,
      synced: await (deps.gate ?? openGate).synced(),
      check: (req) => {
        const decision = deps.guard.checkNode(c.get("xdsIdentity"), req.node, "unary");
        if (decision.ok) return undefined;
        if (decision.code === "permission-denied")
          deps.log?.(`xds: refused REST ${path}: ${decision.message}`);
        return { status: decision.code === "invalid-argument" ? 400 : 403, error: decision.message };
      },
    });
    if (answer.status === 304) return c.body(null, 304);
    if (answer.status === 503) return c.json({ error: answer.error }, 503, { "retry-after": "1" });
    if (answer.status !== 200) return c.json({ error: answer.error }, answer.status);
    return c.body(answer.json, 200, { "content-type": "application/json" });
  });
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
