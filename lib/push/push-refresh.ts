/**
 * What a push says of itself beside the resources it changed: `refresh`, set on a Full push that
 * names Istio configs or services (or everything) but changed nothing that makes Envoy sidecar
 * snapshots stale (no change, or ClusterLoadAssignments only). Sidecar resources are built per
 * host from the push context, apart from the published (proxyless) set (lib/xds/sidecar-snapshots.ts),
 * so a change only they reflect (a DestinationRule's `tls` or connection pool alone, a Sidecar
 * egress change that moves nothing proxyless) is announced by it: the push bumps the push version
 * even with no change, its push log record carries it (store followers announce it), and the
 * change feed carries it on the push's changes array, which every holder of the push shares.
 * Proxyless sessions see only the changes (none for it); sidecar snapshots go stale, and
 * Poll/Watch calls of a sidecar wake.
 */
import type { PushRequest } from "../model/index.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { TypeUrl } from "../resources/xds-types.ts";

/** A push's changes as the flush returns them and the change feed carries them (see the module comment). */
export type PushChanges = readonly ResourceChange[] & { readonly refresh?: true };

/**
 * Whether a push of `request` that changed `changes` is a refresh: a Full push naming configs or
 * services (or everything: configsUpdated null) whose changes are all named ClusterLoadAssignments
 * (or none). Any other change already makes every sidecar snapshot stale.
 */
export function needsRefresh(request: PushRequest, changes: readonly ResourceChange[]): boolean {
  if (!request.full) return false;
  if (request.configsUpdated !== null && request.configsUpdated.length === 0) return false;
  for (const c of changes) if (c.typeUrl !== TypeUrl.endpoint || c.name === "") return false;
  return true;
}

/**
 * Marks `changes` as a refresh push's: a property, not an element, so every reader of the
 * changes sees only resources; not enumerable, so copies and comparisons of the list are unchanged.
 */
export function markRefresh<T extends readonly ResourceChange[]>(changes: T): T & { readonly refresh: true } {
  Object.defineProperty(changes, "refresh", { value: true, enumerable: false });
  return changes as T & { readonly refresh: true };
}

/** Whether `changes` are a refresh push's (markRefresh). */
export function isRefresh(changes: readonly unknown[] | undefined): boolean {
  return (changes as { refresh?: unknown } | undefined)?.refresh === true;
}

/**
 * The type URL older push log records announced a refresh with (one extra change of it, no
 * resource): read as a refresh, the change left out.
 */
export const legacyRefreshType = "edgepilot.dev/sidecar-configs";

/** A push log record's changes as the feed carries them: a refresh marked, a legacy refresh change left out. */
export function loggedPush(changes: readonly ResourceChange[], refresh: boolean | undefined): PushChanges {
  const legacy = changes.some((c) => (c.typeUrl as string) === legacyRefreshType);
  if (!legacy) return refresh ? markRefresh([...changes]) : changes;
  return markRefresh(changes.filter((c) => (c.typeUrl as string) !== legacyRefreshType));
}
