/** One debounce turn over a store with the configured generators: the flush half of the mesh core. */

import type { Pace } from "../pace.ts";
import type { FlushDeps } from "../push/flush.ts";
import { type HeldEndpoints, releaseHeldEndpoints } from "../push/held-endpoints.ts";
import { type PodsPending, podsPendingIn } from "../push/held-pods.ts";
import { type DebounceTurn, runDebounceTurn } from "../push/run.ts";
import { meshOverrides } from "../registry/mesh/effective-mesh.ts";
import { generators } from "../resources/generators/index.ts";
import type { PushContext } from "../resources/push-context.ts";
import type { SyncState } from "../resources/sync-gate.ts";
import { keys, type Store } from "../store/index.ts";
import type { MeshSettings } from "./mesh-core.ts";

/** What a debounce turn needs: the store, the debounce and registry configuration, the clock. */
export interface DebounceDeps {
  store: Store;
  config: Pick<MeshSettings, "debounce" | "registry">;
  now: () => number;
  /** Where a flush reports dangling routes and configs it did not apply. */
  log?: (line: string) => void;
  /**
   * Start-up sync as the turn began (lib/push/held-endpoints.ts). Not synced: services whose
   * endpoints were not heard get no ClusterLoadAssignment. Synced: those held before are queued
   * once, ahead of the turn's first decision, so the turn that opens the sync gate publishes them.
   * Likewise while a cluster's Pod resync is awaited, for services with endpoints waiting for their
   * pod (held-pods.ts). Absent: synced, nothing held (a host without start-up sync).
   */
  sync?: Pick<SyncState, "synced" | "clusters" | "timedOut">;
  /** The turn's flushes yield at this pace (FlushDeps.pace); absent: they do not yield. */
  pace?: Pace;
  /** The push context the core's last flush left (FlushDeps.lastContext). */
  lastContext?: PushContext;
}

/** Flush dependencies: the store, every generator, the domain suffix, the mesh settings the environment set. */
export function flushDeps(deps: DebounceDeps, podsPending?: PodsPending): FlushDeps {
  const heard = deps.sync && !deps.sync.synced ? deps.sync.clusters : undefined;
  return {
    store: deps.store,
    generators,
    context: { domainSuffix: deps.config.registry.domainSuffix },
    now: deps.now,
    meshEnv: meshOverrides(deps.config.registry),
    ...(deps.config.registry.istioNamespace && { systemNamespace: deps.config.registry.istioNamespace }),
    ...(deps.log && { log: deps.log }),
    ...(heard && { endpointsHeard: endpointsHeardIn(heard) }),
    ...(podsPending && { podsPending }),
    ...(deps.pace && { pace: deps.pace }),
    ...(deps.lastContext && { lastContext: deps.lastContext }),
  };
}

/**
 * Runs one debounce turn: pushes what is due and says when to come back (null: queue empty), and
 * whether services are left held for pods (`podsHeld`: the turn must not open the sync gate).
 */
export async function debounceTurn(deps: DebounceDeps): Promise<DebounceTurn> {
  const { store, sync } = deps;
  if (sync?.synced) {
    const released = await releaseHeldEndpoints(store);
    if (released > 0)
      deps.log?.(`push: registry synced: regenerating ${released} service(s) whose endpoints were held back`);
  }
  const pending = sync && podsPendingIn(sync, deps.config.registry.sendUnhealthy);
  if (sync) await releaseHeldForPods(deps, pending);
  const turn = await runDebounceTurn(flushDeps(deps, pending), deps.config.debounce);
  if (pending && (await store.get(keys.heldForPods())) !== undefined) return { ...turn, podsHeld: true };
  return turn;
}

/**
 * Queues once every service held for pods when a cluster they waited for sent its Pod resync or
 * the timeout passed (the flush holds again those still waiting for another cluster's).
 */
async function releaseHeldForPods(deps: DebounceDeps, pending: PodsPending | undefined): Promise<void> {
  const held = (await deps.store.get<HeldEndpoints>(keys.heldForPods()))?.value;
  if (!held) return;
  const waiting = held.clusters ?? [];
  if (pending && waiting.every((c) => pending.clusters.includes(c))) return;
  const released = await releaseHeldEndpoints(deps.store, keys.heldForPods());
  deps.log?.(
    `push: Pod resync arrived or PILOT_SYNC_TIMEOUT passed: regenerating ${released} service(s) whose endpoints waited for their pods`,
  );
}

/** Whose endpoint resync arrived, as the sync state lists the clusters heard from. */
function endpointsHeardIn(clusters: SyncState["clusters"]): (cluster: string) => boolean {
  const heard = new Set(clusters.filter((c) => c.endpoints).map((c) => c.cluster));
  return (cluster) => heard.has(cluster);
}
