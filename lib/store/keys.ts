/**
 * Store key layout. Every key is built here so that prefixes stay consistent across stages.
 * Namespaces, hostnames, slice names and cluster ids never contain "/" (ingest validates
 * them), so each prefix below is unambiguous.
 */

/** Zero-padded so that lexical order is numeric order. */
export function pad(n: number, width = 16): string {
  return Math.trunc(n).toString().padStart(width, "0");
}

export const keys = {
  /** One cluster's record of a service: Service. */
  service: (ns: string, host: string, cluster: string) => `svc/${ns}/${host}/${cluster}`,
  /** Every cluster's record of one service. */
  servicePrefix: (ns: string, host: string) => `svc/${ns}/${host}/`,
  /** All services. */
  services: () => "svc/",
  /** Endpoints of one EndpointSlice (a shard piece): SlicePiece. */
  slice: (ns: string, host: string, cluster: string, slice: string) =>
    `eps/${ns}/${host}/${cluster}/${slice}`,
  /** All pieces of one service's shard from one cluster. */
  slicePrefix: (ns: string, host: string, cluster: string) => `eps/${ns}/${host}/${cluster}/`,
  /** The EndpointShards of one service (all clusters): EndpointShardsRecord. */
  shards: (ns: string, host: string) => `shard/${ns}/${host}`,
  /** A queued PushRequest: QueuedPush. Ordered by arrival. */
  pending: (at: number, id: string) => `push/pending/${pad(at)}-${id}`,
  pendingPrefix: () => "push/pending/",
  /** Present while a flush runs; found at the start of a flush, it means the last one crashed. */
  flushing: () => "push/flushing",
  /** A published xDS resource: StoredResource. */
  resource: (typeUrl: string, name: string) => `xds/${typeUrl}/${name}`,
  resourcePrefix: (typeUrl: string) => `xds/${typeUrl}/`,
  /** What one service generated last time, so a push can remove what it no longer generates. */
  generated: (ns: string, host: string) => `gen/${ns}/${host}`,
  /** The push counter: PushVersion. */
  pushVersion: () => "meta/version",
  /** What push number `seq` changed: PushLogEntry. */
  pushLog: (seq: number) => `pushlog/${pad(seq)}`,
  /** A proxy's last sent, acked and NACKed versions (status and debug). */
  proxy: (nodeId: string) => `proxy/${nodeId}`,
} as const;
