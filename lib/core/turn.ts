/** One debounce turn over a store with the configured generators: the flush half of the mesh core. */
import type { Config } from "../config.ts";
import type { FlushDeps } from "../push/flush.ts";
import { releaseHeldEndpoints } from "../push/held-endpoints.ts";
import { type DebounceTurn, runDebounceTurn } from "../push/run.ts";
import type { SyncState } from "../push/sync-state.ts";
import type { Store } from "../store/index.ts";
import { generators } from "../xds/generators/index.ts";

/** What a debounce turn needs: the store, the debounce and registry configuration, the clock. */
export interface DebounceDeps {
  store: Store;
  config: Pick<Config, "debounce" | "registry">;
  now: () => number;
  /** Where a flush reports dangling routes and configs it did not apply. */
  log?: (line: string) => void;
  /**
   * Start-up sync as the turn began (lib/push/held-endpoints.ts). Not synced: services whose
   * endpoints were not heard get no ClusterLoadAssignment. Synced: those held before are queued
   * once, ahead of the turn's first decision, so the turn that opens the sync gate publishes them.
   * Absent: synced, nothing held (a host without start-up sync).
   */
  sync?: Pick<SyncState, "synced" | "clusters">;
}

/** Flush dependencies: the store, every generator, the domain suffix, the discovery selectors. */
export function flushDeps(deps: DebounceDeps): FlushDeps {
  const heard = deps.sync && !deps.sync.synced ? deps.sync.clusters : undefined;
  return {
    store: deps.store,
    generators,
    context: { domainSuffix: deps.config.registry.domainSuffix },
    now: deps.now,
    discoverySelectors: deps.config.registry.discoverySelectors,
    ...(deps.log && { log: deps.log }),
    ...(heard && { endpointsHeard: endpointsHeardIn(heard) }),
  };
}

/** Runs one debounce turn: pushes what is due and says when to come back (null: queue empty). */
export async function debounceTurn(deps: DebounceDeps): Promise<DebounceTurn> {
  if (deps.sync?.synced) {
    const released = await releaseHeldEndpoints(deps.store);
    if (released > 0)
      deps.log?.(`push: registry synced: regenerating ${released} service(s) whose endpoints were held back`);
  }
  return runDebounceTurn(flushDeps(deps), deps.config.debounce);
}

/** Whose endpoint resync arrived, as the sync state lists the clusters heard from. */
function endpointsHeardIn(clusters: SyncState["clusters"]): (cluster: string) => boolean {
  const heard = new Set(clusters.filter((c) => c.endpoints).map((c) => c.cluster));
  return (cluster) => heard.has(cluster);
}
