/**
 * The ingest webhook: POST /v1/events (watch events) with bearer-token auth and whole-batch
 * validation, plus GET /ready. Runtime-neutral hono app; runtimes add their own routes.
 */
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { clusterIdRule, isClusterId } from "../lib/config.ts";
import {
  type ApplyDeps,
  applyEvents,
  decodeEventsBody,
  formatIngestError,
  type IngestError,
  validateEvents,
} from "../lib/ingest/index.ts";

export interface IngestOptions extends ApplyDeps {
  /** Required bearer token; when undefined, `allowUnauthenticated` decides. */
  token: string | undefined;
  /** The cluster a call names when it names none (CLUSTER_ID). */
  clusterId: string;
  /** Whether a call without a token may ingest (Node: loopback callers only). */
  allowUnauthenticated: (c: Context) => boolean;
  /** What a refused call without a token is told; defaults to Node's loopback-only message. */
  unauthenticatedRefusal?: string;
  /** Called after a batch queued a push, so the runtime can schedule the debounce. */
  onEnqueued?: () => void | Promise<void>;
  /** Whether both ports serve. */
  ready?: () => boolean;
  log?: (line: string) => void;
}

/** Largest ingest body accepted; an API server's list of 5,000 pods fits well inside. */
export const maxBodyBytes = 32 * 1024 * 1024;

/** Builds the ingest app. Errors answer JSON `{ error, index?, field? }`. */
export function createIngestApp(options: IngestOptions): Hono {
  const app = new Hono();
  const log = options.log ?? ((line) => console.log(line));

  app.get("/ready", (c) =>
    options.ready === undefined || options.ready() ? c.json({ ready: true }) : c.json({ ready: false }, 503),
  );

  app.use("/v1/*", async (c, next) => {
    const header = c.req.header("authorization");
    if (options.token !== undefined) {
      if (header === undefined) throw new HTTPException(401, { message: "missing bearer token" });
      if (!timingSafeEqual(header, `Bearer ${options.token}`)) {
        throw new HTTPException(401, { message: "wrong bearer token" });
      }
    } else if (!options.allowUnauthenticated(c)) {
      throw new HTTPException(401, {
        message:
          options.unauthenticatedRefusal ??
          "no EDGEPILOT_TOKEN is set, so ingest accepts unauthenticated calls from loopback only",
      });
    }
    await next();
  });

  app.post("/v1/events", async (c) => {
    const cluster = c.req.query("cluster") ?? options.clusterId;
    if (!isClusterId(cluster))
      return c.json({ error: `cluster ${JSON.stringify(cluster)}: ${clusterIdRule}` }, 400);
    const length = Number(c.req.header("content-length") ?? 0);
    if (length > maxBodyBytes) return c.json({ error: `body over ${maxBodyBytes} bytes` }, 413);
    // Decoded explicitly: workerd warns on .text() for a content type it does not know as text (NDJSON).
    const body = new TextDecoder().decode(await c.req.arrayBuffer());
    if (body.length > maxBodyBytes) return c.json({ error: `body over ${maxBodyBytes} bytes` }, 413);
    const decoded = decodeEventsBody(body, c.req.header("content-type"));
    const events = decoded.ok ? validateEvents(decoded.value) : decoded;
    if (!events.ok) {
      log(`ingest: rejected batch for cluster ${cluster}: ${formatIngestError(events.error)}`);
      return c.json(errorBody(events.error), 400);
    }
    const summary = await applyEvents(options, cluster, events.value);
    if (summary.push) await options.onEnqueued?.();
    return c.json(summary);
  });

  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    log(`ingest: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: "internal error; see the control plane's log" }, 500);
  });
  return app;
}

function errorBody(e: IngestError): { error: string; index?: number; field?: string } {
  return {
    error: e.message,
    ...(e.index !== undefined && { index: e.index }),
    ...(e.field && { field: e.field }),
  };
}

/** Compares without an early exit, so response time says nothing about the token. */
function timingSafeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}
