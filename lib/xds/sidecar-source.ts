/**
 * How an Envoy sidecar's stream reads and takes pushes (lib/xds/view-source.ts hands it here):
 * ClusterLoadAssignments from the shared resources as its namespace's view sees them (the very
 * assignments proxyless clients get, so one endpoint change is one assignment for everyone), its
 * Clusters, Listeners and RouteConfigurations from its class's snapshot (sidecar-snapshots.ts).
 */
import type { Push, ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import type { SidecarBinding, SidecarSnapshots } from "./sidecar-snapshots.ts";
import type { ResourceSource } from "./source.ts";

const fromSnapshot: ReadonlySet<string> = new Set([TypeUrl.cluster, TypeUrl.listener, TypeUrl.route]);

/**
 * `eds` for assignments (and any type URL snapshots are not generated for), `read` (a class's
 * snapshot: a sidecar's or a gateway's) for Clusters, Listeners and RouteConfigurations.
 */
export function snapshotSource(
  read: (typeUrl: string) => Promise<readonly StoredResource[]>,
  eds: ResourceSource,
): ResourceSource {
  return {
    async get(typeUrl, names) {
      if (!fromSnapshot.has(typeUrl)) return eds.get(typeUrl, names);
      if (names.length === 0) return [];
      const wanted = new Set(names);
      return (await read(typeUrl)).filter((r) => wanted.has(r.name));
    },
    async list(typeUrl) {
      if (!fromSnapshot.has(typeUrl)) return eds.list(typeUrl);
      return [...(await read(typeUrl))];
    },
  };
}

/** `eds` for assignments, the sidecar's class snapshot for the rest (snapshotSource). */
export function sidecarSource(
  snapshots: SidecarSnapshots,
  binding: SidecarBinding,
  eds: ResourceSource,
): ResourceSource {
  return snapshotSource((typeUrl) => snapshots.resources(binding, typeUrl), eds);
}

/**
 * The changes a sidecar stream takes for a push, given `filtered` (its namespace view's share):
 * an EDS-only push passes through unless the proxy's own service instances changed with it or a
 * push made the snapshots stale since the stream last read them; any other push (a refresh too:
 * lib/push/push-refresh.ts) gives undefined (re-read everything: the sessions diff by version and
 * send only what changed, and no removal passes the sync gate before the registry is synced).
 */
export function sidecarChanges(
  snapshots: SidecarSnapshots,
  binding: SidecarBinding,
  push: Push,
  filtered: readonly ResourceChange[] | undefined,
):
  | { changes: readonly ResourceChange[] | undefined }
  | Promise<{ changes: readonly ResourceChange[] | undefined }> {
  if (filtered === undefined || !snapshots.endpointsOnly(push) || snapshots.staleFor(binding))
    return { changes: undefined };
  if (binding.signature === undefined) return { changes: filtered };
  return snapshots.instancesChanged(binding).then((changed) => ({ changes: changed ? undefined : filtered }));
}
