/**
 * The sidecar marker: the one change a Full push announces when it names Istio configs or
 * services but publishes nothing that makes Envoy sidecar snapshots stale (no change, or
 * ClusterLoadAssignments only). Sidecar resources are built per host, apart from the published
 * (proxyless) set (lib/xds/sidecar-snapshots.ts), so a change only they reflect (a
 * DestinationRule's `tls` or connection pool alone, a Sidecar egress change that moves nothing
 * proxyless) would otherwise never be announced: with the marker the push bumps the push version
 * (hosts keyed by it re-read), goes into the push log (store followers announce it), and reaches
 * every stream. Its type URL is no xDS type: proxyless sessions index changes by the type URLs
 * they subscribe to and Poll/Watch wake on their own type URL, so they take nothing for it; its
 * name is not "" (a Poll/Watch of a view wakes on any "" name); it names no stored resource.
 */
import type { PushRequest } from "../model/index.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import type { ResourceChange } from "./flush.ts";

/** The marker's type URL (no xDS type: no session subscribes to it). */
export const sidecarMarkerType = "edgepilot.dev/sidecar-configs";
/** The marker's name and version. */
export const sidecarMarkerName = "configs";

/** The marker change (one shared, frozen object: changes are never mutated). */
export const sidecarMarker: ResourceChange = Object.freeze({
  typeUrl: sidecarMarkerType,
  name: sidecarMarkerName,
  version: sidecarMarkerName,
});

/** Whether `c` is the sidecar marker. */
export function isSidecarMarker(c: Pick<ResourceChange, "typeUrl">): boolean {
  return c.typeUrl === sidecarMarkerType;
}

/**
 * Whether a push of `request` that changed `changes` must carry the marker: a Full push naming
 * configs or services (or everything: configsUpdated null) whose changes are all named
 * ClusterLoadAssignments (or none). Any other change already makes every sidecar snapshot stale.
 */
export function needsSidecarMarker(request: PushRequest, changes: readonly ResourceChange[]): boolean {
  if (!request.full) return false;
  if (request.configsUpdated !== null && request.configsUpdated.length === 0) return false;
  for (const c of changes) if (c.typeUrl !== TypeUrl.endpoint || c.name === "") return false;
  return true;
}
