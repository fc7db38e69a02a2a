/** What the control plane has published, read from the store alone (same answer on every instance). */

import { keys, listAll, type Store } from "../store/index.ts";
import type { PushVersion } from "./changes.ts";
import type { StoredResource } from "./types.ts";
import { pushOrder, xdsType } from "./xds-types.ts";

export interface PublishedStatus {
  pushVersion: number;
  pendingPushes: number;
  /** type URL ─▶ name ─▶ version, in push order. */
  types: { typeUrl: string; versions: Record<string, string> }[];
}

/** Reads the push counter, the queue length and every published resource version. */
export async function publishedStatus(store: Store): Promise<PublishedStatus> {
  const version = await store.get<PushVersion>(keys.pushVersion());
  const pending = await listAll(store, keys.pendingPrefix());
  const types = [];
  for (const typeUrl of pushOrder) {
    // A per-proxy type (SDS) is never published: the status lists what every proxy may share.
    if (xdsType(typeUrl)?.perProxy) continue;
    const entries = await listAll<StoredResource>(store, keys.resourcePrefix(typeUrl));
    types.push({
      typeUrl,
      versions: Object.fromEntries(entries.map((e) => [e.value.name, e.value.version])),
    });
  }
  return { pushVersion: version?.value.version ?? 0, pendingPushes: pending.length, types };
}
