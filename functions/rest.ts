/**
 * REST-JSON xDS on a hono app, runtime-neutral: `POST /v3/discovery:{clusters,endpoints,listeners,routes}`
 * (lib/xds/rest.ts). Errors answer JSON `{ error }`: 400 for a bad request, 404 for another
 * /v3 path, 413 for a body over EDGEPILOT_MAX_REQUEST_BYTES.
 */
import type { Hono } from "hono";
import type { Limits } from "../lib/config.ts";
import { answerRest, restPaths } from "../lib/xds/rest.ts";
import type { ResourceSource } from "../lib/xds/source.ts";
import { readUpTo } from "./body.ts";

/** Where REST reads resources from, and the limits it applies. */
export interface RestDeps {
  source: ResourceSource;
  limits: Pick<Limits, "maxNamesPerRequest" | "maxRequestBytes">;
}

/** Adds the REST-JSON routes to `app`. */
export function mountRest(app: Hono, deps: RestDeps): void {
  const { maxRequestBytes } = deps.limits;
  const tooBig = `body over ${maxRequestBytes} bytes (EDGEPILOT_MAX_REQUEST_BYTES)`;
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
    const answer = await answerRest(
      deps.source,
      typeUrl,
      new TextDecoder().decode(bytes),
      deps.limits.maxNamesPerRequest,
    );
    if (answer.status === 304) return c.body(null, 304);
    if (answer.status === 400) return c.json({ error: answer.error }, 400);
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
