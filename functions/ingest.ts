/**
 * The ingest webhooks, runtime-neutral (hono): POST /v1/events (watch events), /v1/resync (a
 * complete list of one kind), /v1/admission and /v1/admission/<cluster> (AdmissionReview; the
 * path form is for clientConfig.url, which may not carry a query), with bearer-token auth and
 * whole-body validation before anything is applied; plus GET /ready. Bodies are limited while they
 * stream; decoding, validation, applying and committing are paced (lib/pace.ts) so serving never
 * starves; each batch applies all or nothing (lib/ingest/atomic.ts).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { timingSafeEqual } from "../lib/auth/timing-safe.ts";
import { clusterIdRule, isClusterId } from "../lib/config.ts";
import { createIngestCore, type IngestCore, type IngestCoreOptions } from "../lib/core/ingest.ts";
import { IngestBusyError, IngestLeaseLostError } from "../lib/core/ingest-lease.ts";
import {
  type AdmissionAnswer,
  admissionAnswer,
  admissionResponse,
  decodeAdmissionReview,
  decodeEventsBody,
  formatIngestError,
  type IngestError,
  type KubeObject,
  parseJsonSliced,
  validateEventsPaced,
  validateList,
} from "../lib/ingest/index.ts";
import { logAt, logError, logWarn } from "../lib/log/line-log.ts";
import { logSafe } from "../lib/log-safe.ts";
import { createPace, type Pace } from "../lib/pace.ts";
import { istioWarnings } from "../lib/registry/istio/warnings.ts";
import { CommitError } from "../lib/store/staged.ts";
import { readTextUpTo } from "./body.ts";
import { type GatewayStatusOptions, mountGatewayStatus } from "./gateway-status.ts";

/** The header every ingest answer carries: the instance id of the control plane's state. */
export const instanceHeader = "x-edgepilot-instance";

/** Who may call ingest: the bearer token, or what decides when there is none. */
export interface IngestAuthOptions {
  /** Required bearer token; when undefined, `allowUnauthenticated` decides. */
  token: string | undefined;
  /** Whether a call without a token may ingest (Node: loopback callers only). */
  allowUnauthenticated: (c: Context) => boolean;
  /** What a refused call without a token is told; defaults to Node's loopback-only message. */
  unauthenticatedRefusal?: string;
}

/** The transport's own options: the default cluster, readiness, the log. */
export interface IngestAppOptions extends IngestAuthOptions {
  /** The cluster a call names when it names none (CLUSTER_ID). */
  clusterId: string;
  /** Whether both ports serve. */
  ready?: () => boolean;
  log?: (line: string) => void;
  /** GET /v1/gateway-status (functions/gateway-status.ts), served when given. */
  gatewayStatus?: GatewayStatusOptions;
}

/**
 * The app over a mesh core's ingest (`core`), or over the means to build one (a store, clock,
 * registry options, and optionally the sync tracker and requestTurn) for a host that has no core.
 * With sync, every answer names the state's instance (x-edgepilot-instance, and `instance` in
 * JSON summaries) and /ready's body says how far start-up sync got.
 */
export type IngestOptions = IngestAppOptions & ({ core: IngestCore } | IngestCoreOptions);

/** Largest ingest body accepted; an API server's list of 5,000 pods fits well inside. */
export const maxBodyBytes = 32 * 1024 * 1024;

/** Builds the ingest app: decodes and validates, then calls the core. Errors answer JSON `{ error, index?, field? }`. */
export function createIngestApp(options: IngestOptions): Hono {
  const app = new Hono();
  const log = options.log ?? ((line) => console.log(line));
  const core = "core" in options ? options.core : createIngestCore({ ...options, log });
  const { sync } = core;
  // 200 once the ports serve, whatever the sync: ingest must reach us to sync at all.
  app.get("/ready", async (c) => {
    if (options.ready !== undefined && !options.ready()) return c.json({ ready: false }, 503);
    if (!sync) return c.json({ ready: true });
    const { synced, published, timedOut, instance, clusters } = await sync.state();
    return c.json({ ready: true, synced, published, timedOut, instance, clusters });
  });

  app.use("/v1/*", ingestAuth(options), async (c, next) => {
    if (sync) c.header(instanceHeader, await sync.instance());
    await next();
  });

  const answer = async (c: Context, summary: object) =>
    c.json(sync ? { ...summary, instance: await sync.instance() } : summary);
  const reject = (c: Context, what: string, cluster: string, error: IngestError) => {
    logWarn(log, `ingest: rejected ${what} for cluster ${cluster}: ${formatIngestError(error)}`);
    return c.json(errorBody(error), 400);
  };

  app.post("/v1/events", async (c) => {
    const pace = createPace();
    const { cluster, body } = await readCall(c, options.clusterId, pace);
    const decoded = await decodeEventsBody(body, c.req.header("content-type"), pace);
    const events = decoded.ok ? await validateEventsPaced(decoded.value, pace) : decoded;
    if (!events.ok) return reject(c, "batch", cluster, events.error);
    return answer(c, await core.events(cluster, events.value, pace));
  });

  app.post("/v1/resync", async (c) => {
    const pace = createPace();
    const { cluster, body } = await readCall(c, options.clusterId, pace);
    const parsed = await parseJsonSliced(body, pace);
    const kind = c.req.query("kind") ?? "";
    const { watching, group } = c.req.query();
    const list = parsed.ok ? await validateList(kind, parsed.value, pace, watching, group) : parsed;
    if (!list.ok) return reject(c, "resync", cluster, list.error);
    return answer(c, await core.resync(cluster, list.value, pace));
  });

  const admission = async (c: Context) => {
    const pace = createPace();
    const { cluster, body } = await readCall(c, options.clusterId, pace);
    const parsed = await parseJsonSliced(body, pace);
    const review = parsed.ok ? decodeAdmissionReview(parsed.value) : parsed;
    if (!review.ok) return reject(c, "AdmissionReview", cluster, review.error);
    const { event, dryRun } = review.value;
    const answer = admissionAnswer(review.value, (o) => istioWarnings(o.kind, o));
    if (!answer.allowed) {
      if (event && event.type !== "BOOKMARK") logDenied(log, cluster, event.object, answer, dryRun);
      return c.json(admissionResponse(answer));
    }
    if (event && !dryRun) await core.admission(cluster, event, pace);
    return c.json(admissionResponse(answer));
  };
  app.post("/v1/admission", admission);
  // The admissionregistration API forbids a query in clientConfig.url: the cluster goes in the path.
  app.post("/v1/admission/:cluster", admission);

  if (options.gatewayStatus) mountGatewayStatus(app, options.gatewayStatus, options.clusterId);

  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status);
    // Another instance over the shared store held the ingest lease too long: nothing applied, retry.
    if (err instanceof IngestBusyError || err instanceof IngestLeaseLostError) {
      logWarn(log, `ingest: ${c.req.method} ${c.req.path} answered 503: ${err.message}`);
      c.header("retry-after", String(err instanceof IngestBusyError ? err.retryAfterSeconds : 1));
      return c.json({ error: err.message }, 503);
    }
    // A bug or a failing store: the batch was staged and dropped (or its commit rolled back).
    const partly = err instanceof CommitError && !err.rolledBack;
    const detail = logSafe(err instanceof Error ? (err.stack ?? err.message) : String(err), 4096);
    logError(
      log,
      `ingest: internal error on ${c.req.method} ${c.req.path}, ${partly ? "PARTLY APPLIED" : "nothing applied"}: ${detail}`,
    );
    const error = partly
      ? "internal error; the store failed while committing and could not be rolled back; resync"
      : "internal error; nothing of this call was applied; see the control plane's log";
    return c.json({ error }, 500);
  });
  return app;
}

/**
 * The ingest bearer check (EDGEPILOT_TOKEN, compared in constant time), as middleware: a refused
 * call throws HTTPException 401 saying what was wrong, before its body is read. One check for every
 * host: createIngestApp runs it, and so does the Worker before it forwards a call to the MeshStore.
 */
export function ingestAuth(options: IngestAuthOptions): MiddlewareHandler {
  return async (c, next) => {
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
  };
}

/**
 * The cluster a call is for and its body as text, or an HTTPException (400, 413). The body is read
 * under the limit while it streams: a larger one is refused without being kept (chunked or not).
 */
async function readCall(
  c: Context,
  defaultCluster: string,
  pace: Pace,
): Promise<{ cluster: string; body: readonly string[] }> {
  const inPath = c.req.param("cluster");
  const inQuery = c.req.query("cluster");
  if (inPath !== undefined && inQuery !== undefined && inPath !== inQuery)
    throw new HTTPException(400, {
      message: `cluster ${JSON.stringify(inPath)} in the path and ${JSON.stringify(inQuery)} in the query differ`,
    });
  const cluster = inPath ?? inQuery ?? defaultCluster;
  if (!isClusterId(cluster))
    throw new HTTPException(400, { message: `cluster ${JSON.stringify(cluster)}: ${clusterIdRule}` });
  const tooBig = () => new HTTPException(413, { message: `body over ${maxBodyBytes} bytes` });
  if (Number(c.req.header("content-length") ?? 0) > maxBodyBytes) throw tooBig();
  // Decoded as it streams and kept in pieces (see readTextUpTo): a 30 MB body is never one long call.
  const { pieces, more } = await readTextUpTo(c.req.raw, maxBodyBytes, pace);
  if (more) throw tooBig();
  return { cluster, body: pieces };
}

function errorBody(e: IngestError): { error: string; index?: number; field?: string } {
  return {
    error: e.message,
    ...(e.index !== undefined && { index: e.index }),
    ...(e.field && { field: e.field }),
  };
}

/** istiod logs a denial at info, with " (dry run)" when nothing would have been stored anyway. */
function logDenied(
  log: (line: string) => void,
  cluster: string,
  object: KubeObject,
  answer: AdmissionAnswer,
  dryRun: boolean,
): void {
  const { namespace, name } = object.metadata;
  logAt(
    log,
    "info",
    `ingest: admission denied ${object.kind} ${namespace ? `${namespace}/` : ""}${name} in cluster ${cluster}: ` +
      `${answer.status?.message ?? ""}${dryRun ? " (dry run)" : ""}`,
  );
}
