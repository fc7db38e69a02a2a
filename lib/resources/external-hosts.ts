/** The ServiceEntry registry's hosts as the store holds them now, for judging route destinations. */

import { type ExternalHosts, externalHosts } from "../registry/istio/route-destinations.ts";
import { convertServiceEntry } from "../registry/istio/service-entry.ts";
import type { StoredServiceEntry } from "../registry/istio/stored.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/**
 * Every stored ServiceEntry (each cluster's copy) as the hosts and ports it declares: one list of
 * the entries (a handful to a few thousand, as the VirtualServices the flush lists), read once per
 * flush or ingest call that judges routes.
 */
export async function loadExternalHosts(store: Store): Promise<ExternalHosts> {
  const entries = await listAll<StoredServiceEntry>(store, keys.configPrefix("ServiceEntry"));
  return externalHosts(entries.flatMap((e) => convertServiceEntry(e.value)));
}
