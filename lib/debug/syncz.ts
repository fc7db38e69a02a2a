/**
 * /debug/syncz: each proxy's xDS sync status from its record under keys.proxy(), in istiod's
 * SyncStatus JSON shape (pilot/pkg/xds/debug.go) so scripts written against istiod carry over,
 * with edgepilot's additions (generator, connected_since, last NACK per type). istiod's
 * `*_sent`/`*_acked` are nonces; a record keeps versions (the version_info sent, the one last
 * ACKed), which compare the same way: equal means the proxy holds what it was sent.
 */

import { type XdsShort, xdsType } from "../resources/xds-types.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { isExpired, type ProxyRecord, type ProxyRecordType } from "../xds/proxy-record.ts";
import { type DebugList, mapPage, readPage } from "./page.ts";
import type { Parsed } from "./params.ts";

/** The last NACK of one type, as /debug/syncz shows it. */
export interface SyncNack {
  type_url: string;
  nonce: string;
  /** The version the proxy kept. */
  version_info: string;
  message: string;
}

/**
 * `<short>_sent` and `<short>_acked` of every served type (lib/resources/xds-types.ts), as istiod's
 * `cluster_sent`, `listener_acked`, ...: a type gets its fields from its descriptor.
 */
export type SyncSent = { [S in XdsShort as `${S}_sent` | `${S}_acked`]?: string };

/** One proxy's row: istiod's SyncStatus fields (the per-type ones in SyncSent), then edgepilot's. */
export interface SyncStatus extends SyncSent {
  cluster_id?: string;
  proxy: string;
  proxy_type?: string;
  /** istiod's field; edgepilot learns no proxy version, so it is never set here. */
  proxy_version?: string;
  istio_version?: string;
  /** Node metadata GENERATOR ("grpc": proxyless gRPC; "" an Envoy sidecar). */
  generator: string;
  /** When the proxy's stream began (RFC 3339), when the record says. */
  connected_since?: string;
  /** When the record was last written (RFC 3339): at most a second behind while the proxy ACKs. */
  updated_at: string;
  /** The last NACK of each type the proxy has not ACKed since. */
  nacks?: SyncNack[];
}

/** The row of one record. Pure. */
export function syncStatusOf(record: ProxyRecord): SyncStatus {
  const out: SyncStatus = {
    ...(record.cluster !== undefined && { cluster_id: record.cluster }),
    proxy: record.nodeId,
    proxy_type: proxyType(record.nodeId),
    ...(record.istioVersion !== undefined && { istio_version: record.istioVersion }),
    generator: record.generator,
    ...(record.connectedAt !== undefined && { connected_since: new Date(record.connectedAt).toISOString() }),
    updated_at: new Date(record.updatedAt).toISOString(),
  };
  const nacks: SyncNack[] = [];
  for (const t of record.types) {
    const s = xdsType(t.typeUrl)?.short;
    if (s !== undefined) setSent(out, s, t);
    if (t.nack)
      nacks.push({
        type_url: t.typeUrl,
        nonce: t.nack.nonce,
        version_info: t.nack.versionInfo,
        message: t.nack.message,
      });
  }
  if (nacks.length > 0) out.nacks = nacks;
  return out;
}

function setSent(out: SyncStatus, s: XdsShort, t: ProxyRecordType) {
  if (t.sent) out[`${s}_sent`] = t.sent.versionInfo;
  if (t.ackedVersion !== undefined) out[`${s}_acked`] = t.ackedVersion;
}

/** istiod's proxy type: the first `~` field of an Istio node id (sidecar, router, ...), else absent. */
function proxyType(nodeId: string): string | undefined {
  const parts = nodeId.split("~");
  return parts.length === 4 && parts[0] !== "" ? parts[0] : undefined;
}

/** What GET /debug/syncz was asked. */
export interface SynczQuery {
  limit: number;
  cursor?: string;
  /** One proxy by exact node id. */
  proxyID?: string;
  now: number;
}

/**
 * The rows of a page of live records (expired ones, left by a process that died, are skipped), or
 * of the one proxy asked for (none when it has no live record). Sorted by node id (store order).
 */
export async function readSyncz(store: Store, q: SynczQuery): Promise<Parsed<DebugList<SyncStatus>>> {
  if (q.proxyID !== undefined) {
    const entry = await store.get<ProxyRecord>(keys.proxy(q.proxyID));
    return {
      ok: true,
      value: { items: entry && !isExpired(entry.value, q.now) ? [syncStatusOf(entry.value)] : [] },
    };
  }
  const page = await readPage<ProxyRecord>(store, keys.proxyPrefix(), q.limit, q.cursor);
  if (!page.ok) return page;
  return {
    ok: true,
    value: mapPage(page.value, (e) => (isExpired(e.value, q.now) ? undefined : syncStatusOf(e.value))),
  };
}
