/**
 * What every AWS Lambda function of edgepilot builds once per execution environment (a "container",
 * reused across its invocations): the configuration, the logger, the store and the mesh core over
 * it. The three functions share nothing in memory, only the store: each container has its own core,
 * and learns what other containers did from the store (lib/core/store-follower.ts on the xDS side).
 */
import type { Config } from "../../lib/config.ts";
import { createMeshCore, type MeshCore } from "../../lib/core/mesh-core.ts";
import { createPushLogObserver } from "../../lib/core/push-log.ts";
import type { LogLine } from "../../lib/log/line-log.ts";
import { measureStore, type Registry } from "../../lib/metrics/index.ts";
import type { Store } from "../../lib/store/store.ts";

/** What a Lambda host is built from: given by the entry file (from env) or by a test. */
export interface LambdaDeps {
  config: Config;
  log: LogLine;
  /** The shared store (DynamoDB on AWS). */
  store: Store;
  /** The clock (ms); default Date.now. */
  now?: () => number;
}

/** One container's mesh core; `started` settles once its sync state is loaded. */
export interface LambdaMesh {
  core: MeshCore;
  store: Store;
  started: Promise<unknown>;
}

/**
 * The core over `deps.store` (counted on `registry` when given), started at once: a container
 * begins loading during its init phase, and every invocation awaits `started`. `requestTurn` is
 * what a batch that queued a push asks for (the ingest function invokes the debounce function).
 */
export function createLambdaMesh(
  deps: LambdaDeps,
  options: { requestTurn?: () => void; registry?: Registry } = {},
): LambdaMesh {
  const now = deps.now ?? Date.now;
  const store = options.registry ? measureStore(deps.store, options.registry) : deps.store;
  const core = createMeshCore({
    store,
    config: deps.config,
    timers: {
      now,
      setTimeout: (f, ms) => setTimeout(f, ms),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    },
    log: deps.log,
    requestTurn: options.requestTurn ?? (() => undefined),
    // Every container is one of many writers and readers of the store: ingest takes the store's
    // ingest lease, the sync gate reads the stored record, and a follower announces others' pushes.
    follow: { intervalMs: deps.config.storePollIntervalMs },
  });
  // One line per push; a container cannot say how many streams other containers hold.
  core.observe(createPushLogObserver(deps.log, { streams: false }));
  const started = core.start();
  // Awaited by every invocation, which then fails with the cause; not "unhandled" meanwhile.
  started.catch(() => undefined);
  return { core, store, started };
}

/**
 * Cold start, as the first answer of a container logs it: the time from the module's load (the
 * entry file's `loadedAt`) to the end of its first invocation.
 */
export function coldStartLogger(log: LogLine, fn: string, loadedAt: number): () => void {
  let first = true;
  return () => {
    if (!first) return;
    first = false;
    log(
      `edgepilot: ${fn}: cold start: ${Math.round(performance.now() - loadedAt)}ms from module load to the first answer`,
    );
  };
}
