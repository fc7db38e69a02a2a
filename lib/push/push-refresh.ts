/**
 * What a push says of itself beside the resources it changed: `refresh`, set on a Full push that
 * names a security policy, or names Istio configs or services (or everything) but changed nothing
 * that makes Envoy sidecar snapshots stale (no change, or ClusterLoadAssignments only). Sidecar
 * resources are built per host from the push context, apart from the published (proxyless) set
 * (lib/xds/sidecar-snapshots.ts), so a change only they reflect (a DestinationRule's `tls` or
 * connection pool alone, a Sidecar egress change that moves nothing proxyless, a security policy)
 * is announced by it: the push bumps the push version even with no change, its push log record
 * carries it (store followers announce it), and the change feed carries it as Push.refresh.
 * Proxyless sessions see only the changes (none for it); sidecar snapshots go stale, and
 * Poll/Watch calls of a sidecar wake.
 */
import type { PushRequest } from "../model/index.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { namesPolicyKey } from "./scope.ts";

/**
 * Whether a push of `request` that changed `changes` is a refresh: a Full push naming a security
 * policy, or naming configs or services (or everything: configsUpdated null) whose changes are all
 * named ClusterLoadAssignments (or none). Any other change already makes every sidecar snapshot stale.
 */
export function needsRefresh(request: PushRequest, changes: readonly ResourceChange[]): boolean {
  if (!request.full) return false;
  if (request.configsUpdated !== null && request.configsUpdated.length === 0) return false;
  // A security policy shapes only what the proxies it selects derive (their inbound side and TLS),
  // never a published resource: it is announced whatever else the push changed.
  if (request.configsUpdated !== null && namesPolicyKey(request.configsUpdated)) return true;
  for (const c of changes) if (c.typeUrl !== TypeUrl.endpoint || c.name === "") return false;
  return true;
}

/**
 * The type URL older push log records announced a refresh with (one extra change of it, no
 * resource): read as a refresh, the change left out.
 */
export const legacyRefreshType = "edgepilot.dev/sidecar-configs";

/**
 * A push log record's changes and refresh flag as the feed carries them: a legacy refresh change
 * left out and read as the flag.
 */
export function loggedPush(
  changes: readonly ResourceChange[],
  refresh: boolean | undefined,
): { changes: readonly ResourceChange[]; refresh: boolean } {
  const legacy = changes.some((c) => (c.typeUrl as string) === legacyRefreshType);
  if (!legacy) return { changes, refresh: refresh === true };
  return { changes: changes.filter((c) => (c.typeUrl as string) !== legacyRefreshType), refresh: true };
}
