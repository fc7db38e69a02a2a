/**
 * How a gateway proxy's stream reads and takes pushes (lib/xds/view-source.ts hands it here):
 * ClusterLoadAssignments from the shared resources as its namespace's view sees them (the very
 * assignments every other proxy gets), its Clusters, Listeners and RouteConfigurations from its
 * class's snapshot (gateway-snapshots.ts).
 */
import type { Push, ResourceChange } from "../resources/changes.ts";
import type { GatewayBinding, GatewaySnapshots } from "./gateway-snapshots.ts";
import { snapshotSource } from "./sidecar-source.ts";
import type { ResourceSource } from "./source.ts";

/** `eds` for assignments, the gateway's class snapshot for the rest (sidecar-source.ts snapshotSource). */
export function gatewaySource(
  snapshots: GatewaySnapshots,
  binding: GatewayBinding,
  eds: ResourceSource,
): ResourceSource {
  return snapshotSource((typeUrl) => snapshots.resources(binding, typeUrl), eds);
}

/**
 * The changes a gateway stream takes for a push, given `filtered` (its namespace view's share): an
 * EDS-only push passes through unless it changed the gateway's resources (its own port mapping, a
 * DNS service's clusters) or a push made the snapshots stale since the stream last read them; any
 * other push gives undefined (re-read everything: the sessions send only what changed by version).
 */
export function gatewayChanges(
  snapshots: GatewaySnapshots,
  binding: GatewayBinding,
  push: Push,
  filtered: readonly ResourceChange[] | undefined,
  endpointsOnly: boolean,
):
  | Promise<{ changes: readonly ResourceChange[] | undefined }>
  | { changes: readonly ResourceChange[] | undefined } {
  if (filtered === undefined || !endpointsOnly || snapshots.staleFor(binding)) return { changes: undefined };
  return snapshots.changedBy(binding, push).then((changed) => ({ changes: changed ? undefined : filtered }));
}
