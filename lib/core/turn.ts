/** One debounce turn over a store with the configured generators: the flush half of the mesh core. */
import type { Config } from "../config.ts";
import type { FlushDeps } from "../push/flush.ts";
import { type DebounceTurn, runDebounceTurn } from "../push/run.ts";
import type { Store } from "../store/index.ts";
import { generators } from "../xds/generators/index.ts";

/** What a debounce turn needs: the store, the debounce and registry configuration, the clock. */
export interface DebounceDeps {
  store: Store;
  config: Pick<Config, "debounce" | "registry">;
  now: () => number;
  /** Where a flush reports dangling routes and configs it did not apply. */
  log?: (line: string) => void;
}

/** Flush dependencies: the store, every generator, the domain suffix, the discovery selectors. */
export function flushDeps(deps: DebounceDeps): FlushDeps {
  return {
    store: deps.store,
    generators,
    context: { domainSuffix: deps.config.registry.domainSuffix },
    now: deps.now,
    discoverySelectors: deps.config.registry.discoverySelectors,
    ...(deps.log && { log: deps.log }),
  };
}

/** Runs one debounce turn: pushes what is due and says when to come back (null: queue empty). */
export function debounceTurn(deps: DebounceDeps): Promise<DebounceTurn> {
  return runDebounceTurn(flushDeps(deps), deps.config.debounce);
}
