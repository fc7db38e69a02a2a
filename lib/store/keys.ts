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
  /** Last seen resourceVersion of one object, and what it fed: ObjectRecord. "_" for cluster-scoped. */
  object: (cluster: string, kind: string, ns: string, name: string) =>
    `obj/${cluster}/${kind}/${ns || "_"}/${name}`,
  /** Every object record, all clusters. */
  objects: () => "obj/",
  objectPrefix: (cluster: string, kind: string) => `obj/${cluster}/${kind}/`,
  /** A Pod as endpoints need it: PodInfo. */
  pod: (cluster: string, ns: string, name: string) => `pod/${cluster}/${ns}/${name}`,
  /** Which pod holds an IP: { namespace, name }. */
  podIp: (cluster: string, ip: string) => `podip/${cluster}/${ip}`,
  /** A Node's locality: NodeInfo. */
  node: (cluster: string, name: string) => `node/${cluster}/${name}`,
  /** A Namespace's labels: NamespaceInfo. */
  namespace: (cluster: string, name: string) => `ns/${cluster}/${name}`,
  /**
   * Reverse indexes from what an endpoint depends on to the slice that depends on it, so a Pod
   * or Node event recomputes only the shards it touches. Value: { namespace, hostname }.
   */
  ref: (on: "pod" | "ip" | "node", cluster: string, id: string, ns: string, host: string, slice: string) =>
    `ref/${on}/${cluster}/${id}/${ns}/${host}/${slice}`,
  refPrefix: (on: "pod" | "ip" | "node", cluster: string, id: string) => `ref/${on}/${cluster}/${id}/`,
  /** A proxy's last sent, acked and NACKed versions (status and debug). */
  proxy: (nodeId: string) => `proxy/${nodeId}`,
} as const;
