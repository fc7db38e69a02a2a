/// <reference types="@cloudflare/vitest-pool-workers/types" />
// Types `env` from "cloudflare:workers" / "cloudflare:test" in workerd tests as the Worker's Env.
import type { Env } from "../../functions/workers/index.ts";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {}
  }
}

type WorkerEnv = Env;
