/** Records each proxy's xDS status under proxy/<node id> and logs every new NACK once. */
import { keys, type Store } from "../lib/store/index.ts";
import type { ProxyStatus } from "../lib/xds/types.ts";

/** A status sink for one stream: writes are in order, and a failed write is logged, not thrown. */
export function createProxyStatusRecorder(
  store: Store,
  log: (line: string) => void,
): (s: ProxyStatus) => void {
  const loggedNacks = new Set<string>();
  let last: Promise<unknown> = Promise.resolve();
  return (status) => {
    for (const t of status.types) {
      if (!t.nack || loggedNacks.has(t.nack.nonce)) continue;
      loggedNacks.add(t.nack.nonce);
      log(
        `xds: ${status.nodeId || "(no node id)"} NACKed ${t.typeUrl} (kept ${t.nack.versionInfo || "nothing"}): ${t.nack.message}`,
      );
    }
    if (status.nodeId === "") return;
    last = last
      .then(() => store.put(keys.proxy(status.nodeId), { ...status, at: Date.now() }))
      .catch((err) => log(`xds: could not record status of ${status.nodeId}: ${err}`));
  };
}
