/**
 * The ingest webhooks, runtime-neutral (hono): POST /v1/events (watch events), /v1/resync (a
 * complete list of one kind), /v1/admission (AdmissionReview), with bearer-token auth and
 * whole-body validation before anything is applied; plus GET /ready.
 */
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { timingSafeEqual } from "../lib/auth/timing-safe.ts";
import { clusterIdRule, isClusterId } from "../lib/config.ts";
import {
  type ApplyDeps,
  type ApplySummary,
  admissionResponse,
  applyEvents,
  decodeAdmissionReview,
  decodeEventsBody,
  formatIngestError,
  type IngestError,
  type Result,
  resync,
  validateEvents,
  validateList,
} from "../lib/ingest/index.ts";
import type { SyncTracker } from "../lib/push/sync-tracker.ts";

/** The header every ingest answer carries: the instance id of the control plane's state. */
export const instanceHeader = "x-edgepilot-instance";

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
  /**
   * Start-up sync: notes each accepted call and resync, names the state's instance in every
   * answer (x-edgepilot-instance, and `instance` in JSON summaries), and fills /ready's body.
   */
  sync?: Pick<SyncTracker, "ingested" | "instance" | "state">;
  log?: (line: string) => void;
}

/** Largest ingest body accepted; an API server's list of 5,000 pods fits well inside. */
export const maxBodyBytes = 32 * 1024 * 1024;

/** Builds the ingest app. Errors answer JSON `{ error, index?, field? }`. */
export function createIngestApp(options: IngestOptions): Hono {
  const app = new Hono();
  const log = options.log ?? ((line) => console.log(line));

  const { sync } = options;
  // 200 once the ports serve, whatever the sync: ingest must reach us to sync at all.
  app.get("/ready", async (c) => {
    if (options.ready !== undefined && !options.ready()) return c.json({ ready: false }, 503);
    if (!sync) return c.json({ ready: true });
    const { synced, published, timedOut, instance, clusters } = await sync.state();
    return c.json({ ready: true, synced, published, timedOut, instance, clusters });
  });

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
    if (sync) c.header(instanceHeader, await sync.instance());
    await next();
  });

  // One batch at a time per instance: an object's events apply in the order they arrived.
  let tail: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
  const finish = async (c: Context, cluster: string, summary: ApplySummary, resyncKind?: string) => {
    await sync?.ingested(cluster, resyncKind);
    if (summary.push) await options.onEnqueued?.();
    return c.json(sync ? { ...summary, instance: await sync.instance() } : summary);
  };
  const reject = (c: Context, what: string, cluster: string, error: IngestError) => {
    log(`ingest: rejected ${what} for cluster ${cluster}: ${formatIngestError(error)}`);
    return c.json(errorBody(error), 400);
  };

  app.post("/v1/events", async (c) => {
    const { cluster, body } = await readCall(c, options.clusterId);
    const decoded = decodeEventsBody(body, c.req.header("content-type"));
    const events = decoded.ok ? validateEvents(decoded.value) : decoded;
    if (!events.ok) return reject(c, "batch", cluster, events.error);
    return finish(c, cluster, await serialized(() => applyEvents(options, cluster, events.value)));
  });

  app.post("/v1/resync", async (c) => {
    const { cluster, body } = await readCall(c, options.clusterId);
    const parsed = parseJson(body);
    const list = parsed.ok ? validateList(c.req.query("kind") ?? "", parsed.value) : parsed;
    if (!list.ok) return reject(c, "resync", cluster, list.error);
    const summary = await serialized(() => resync(options, cluster, list.value));
    if (summary.deleted)
      log(`ingest: resync of ${list.value.kind} in ${cluster} deleted ${summary.deleted} missed object(s)`);
    return finish(c, cluster, summary, list.value.kind);
  });

  app.post("/v1/admission", async (c) => {
    const { cluster, body } = await readCall(c, options.clusterId);
    const parsed = parseJson(body);
    const review = parsed.ok ? decodeAdmissionReview(parsed.value) : parsed;
    if (!review.ok) return reject(c, "AdmissionReview", cluster, review.error);
    const { uid, event, dryRun } = review.value;
    if (event && !dryRun) {
      const summary = await serialized(() =>
        applyEvents(options, cluster, [event], { trackVersions: false }),
      );
      await sync?.ingested(cluster);
      if (summary.push) await options.onEnqueued?.();
    }
    return c.json(admissionResponse(uid));
  });

  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    log(`ingest: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: "internal error; see the control plane's log" }, 500);
  });
  return app;
}

/** The cluster a call is for and its body as text, or an HTTPException (400, 413). */
async function readCall(c: Context, defaultCluster: string): Promise<{ cluster: string; body: string }> {
  const cluster = c.req.query("cluster") ?? defaultCluster;
  if (!isClusterId(cluster))
    throw new HTTPException(400, { message: `cluster ${JSON.stringify(cluster)}: ${clusterIdRule}` });
  const tooBig = () => new HTTPException(413, { message: `body over ${maxBodyBytes} bytes` });
  if (Number(c.req.header("content-length") ?? 0) > maxBodyBytes) throw tooBig();
  // Decoded explicitly: workerd warns on .text() for a content type it does not know as text (NDJSON).
  const body = new TextDecoder().decode(await c.req.arrayBuffer());
  if (body.length > maxBodyBytes) throw tooBig();
  return { cluster, body };
}

function parseJson(body: string): Result<unknown> {
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (e) {
    return { ok: false, error: { message: `malformed JSON: ${e instanceof Error ? e.message : e}` } };
  }
}

function errorBody(e: IngestError): { error: string; index?: number; field?: string } {
  return {
    error: e.message,
    ...(e.index !== undefined && { index: e.index }),
    ...(e.field && { field: e.field }),
  };
}
