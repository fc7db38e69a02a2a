/**
 * The real Worker (wrangler.toml, functions/workers/index.ts) on local workerd through wrangler's
 * programmatic dev server (unstable_dev: miniflare + workerd, offline), its Durable Object state
 * persisted in `dir` so a stop and a start on the same dir is a Worker restart that keeps its mesh,
 * as a redeploy keeps a Durable Object's storage. Ingest is authenticated with its EDGEPILOT_TOKEN.
 */
import { unstable_dev } from "wrangler";
import { listOf } from "../restart/support.ts";

export const workerToken = "agent-worker-e2e-ingest-token";
export const workerXdsToken = "agent-worker-e2e-xds-token-0001";

/** A running Worker: where it listens, its ingest, and stop (its state stays in `dir`). */
export interface RunningWorker {
  port: number;
  /** What a converge helper shows on failure (the Worker's own log goes to the test's output). */
  output(): string;
  /** POSTs watch events to /v1/events (the ingest path, with its token). */
  post(events: unknown): Promise<Response>;
  /** POSTs a complete List of `kind` to /v1/resync; throws unless 200. */
  resync(kind: string, items: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the Worker over the state in `dir` (created or reused). */
export async function startWorker(dir: string, vars: Record<string, string> = {}): Promise<RunningWorker> {
  const worker = await unstable_dev("functions/workers/index.ts", {
    config: "wrangler.toml",
    local: true,
    persistTo: dir,
    inspect: false,
    logLevel: process.env.E2E_WORKER_LOG ? "log" : "error",
    vars: {
      EDGEPILOT_TOKEN: workerToken,
      EDGEPILOT_XDS_TOKEN: workerXdsToken,
      PILOT_DEBOUNCE_AFTER: "10ms",
      ...vars,
    },
    // No file watching: an edit elsewhere in the tree would restart workerd mid-test.
    experimental: { disableExperimentalWarning: true, watch: false },
  });
  const base = `http://${worker.address}:${worker.port}`;
  const call = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${workerToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return {
    port: worker.port,
    output: () => `(the Worker on ${base}; its log is in the test output)`,
    post: (events) => call("/v1/events", events),
    async resync(kind, items) {
      const res = await call(`/v1/resync?kind=${kind}`, listOf(`${kind}List`, items));
      if (res.status !== 200) throw new Error(`resync ${kind}: ${res.status} ${await res.text()}`);
    },
    stop: () => worker.stop(),
  };
}
