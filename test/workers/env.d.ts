/// <reference types="@cloudflare/vitest-plugin/types" />
// Types `env` and `exports` from "cloudflare:workers" in workerd tests as the Worker's Env and main module.
import type { Env } from "../../functions/workers/index.ts";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {}
    interface GlobalProps {
      mainModule: typeof import("../../functions/workers/index.ts");
      durableNamespaces: "MeshStore";
    }
  }
}

type WorkerEnv = Env;
