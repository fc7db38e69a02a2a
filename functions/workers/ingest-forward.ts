/**
 * The Worker's side of ingest: POST /v1/events, /v1/resync, /v1/admission and GET /v1/gateway-status
 * are authenticated here (functions/ingest.ts's `ingestAuth`, EDGEPILOT_TOKEN) and then forwarded, query string and
 * headers kept, into the MeshStore as ONE call per batch (its fetch, ingest-host.ts), which applies
 * the batch over its own SQL store and answers exactly what Node answers. A refused call (401)
 * never reaches the object. The body is read first, keeping at most one byte past the ingest limit
 * (the object answers the 413 itself, with the state's instance header, as Node does).
 */
import type { Context, Hono } from "hono";
import type { Identity } from "../../lib/auth/identity.ts";
import { logError } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import { forwardedIdentityHeader } from "../auth.ts";
import { readUpTo } from "../body.ts";
import { gatewayStatusPath } from "../gateway-status.ts";
import { type IngestAuthOptions, ingestAuth, maxBodyBytes } from "../ingest.ts";

/** The ingest routes the Worker forwards. */
export const ingestPaths = ["/v1/events", "/v1/resync", "/v1/admission", "/v1/admission/:cluster"] as const;

/** What the Worker vouches for in `x-edgepilot-identity` once a call showed EDGEPILOT_TOKEN. */
const ingestIdentity: Identity = { method: "token", subject: "EDGEPILOT_TOKEN" };

/** What a caller is told when the object failed to answer (a batch applies whole, once: resending is safe). */
export const forwardFailure =
  "internal error; the Durable Object holding the mesh failed while serving this call, so it may or may not " +
  "have been applied; send it again (events older than what is stored are skipped)";

/**
 * Routes the ingest calls on `app` to `forward` (the MeshStore stub's fetch), once authenticated.
 * The object's answer is returned as is; a call to it that throws answers 500 (forwardFailure).
 */
export function mountIngestForward(
  app: Hono,
  auth: IngestAuthOptions,
  forward: (request: Request) => Promise<Response>,
  log: (line: string) => void,
): void {
  app.use("/v1/*", ingestAuth(auth));
  const call = async (c: Context, body: Uint8Array | undefined) => {
    const headers = new Headers(c.req.raw.headers);
    headers.delete("content-length");
    // The token stays here; the object trusts this header (it is reachable only through its binding).
    headers.delete("authorization");
    headers.set(forwardedIdentityHeader, JSON.stringify(ingestIdentity));
    try {
      // No abort signal: a batch the object started applies whole even if the caller left.
      return await forward(new Request(c.req.raw.url, { method: c.req.method, headers, body }));
    } catch (err) {
      logError(log, `ingest: the Durable Object failed on ${c.req.path}: ${logSafe(String(err), 4096)}`);
      return c.json({ error: forwardFailure }, 500);
    }
  };
  for (const path of ingestPaths)
    app.post(path, async (c) => call(c, (await readUpTo(c.req.raw, maxBodyBytes + 1)).bytes));
  // The statuses are computed from the object's store, so the object answers (its ETag and 304 too).
  app.get(gatewayStatusPath, (c) => call(c, undefined));
}

/** Whether an ingest call inside the MeshStore came through mountIngestForward (the only way in). */
export function forwardedIngest(headers: Headers): boolean {
  const raw = headers.get(forwardedIdentityHeader);
  if (raw === null) return false;
  try {
    const id = JSON.parse(raw) as Partial<Identity> | null;
    return id?.method === ingestIdentity.method && id.subject === ingestIdentity.subject;
  } catch {
    return false;
  }
}
