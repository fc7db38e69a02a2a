/** The debounce function, runtime-neutral: one turn over the store's push queue with the configured generators. */
import type { Config } from "../lib/config.ts";
import type { FlushDeps } from "../lib/push/flush.ts";
import { type DebounceTurn, runDebounceTurn } from "../lib/push/run.ts";
import type { Store } from "../lib/store/index.ts";
import { generators } from "../lib/xds/generators/index.ts";

/** What a debounce turn needs from the runtime. */
export interface DebounceDeps {
  store: Store;
  config: Pick<Config, "debounce" | "registry">;
  now: () => number;
}

/** Flush dependencies for a runtime: the store, every generator, the domain suffix, the discovery selectors. */
export function flushDeps(deps: DebounceDeps): FlushDeps {
  return {
    store: deps.store,
    generators,
    context: { domainSuffix: deps.config.registry.domainSuffix },
    now: deps.now,
    discoverySelectors: deps.config.registry.discoverySelectors,
  };
}

/** Runs one debounce turn: pushes what is due and says when to come back (null: queue empty). */
export function debounceTurn(deps: DebounceDeps): Promise<DebounceTurn> {
  return runDebounceTurn(flushDeps(deps), deps.config.debounce);
}
