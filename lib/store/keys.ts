/**
 * Store key layout. Every key is built here so that prefixes stay consistent across stages.
 * Every segment that came from input (namespace, host, cluster, kind, name, slice, IP, node id,
 * resource name) is escaped by `segment`: "/" can never split a segment and "%" can never fake
 * an escape, so no input reaches another key's prefix. Names ingest accepts (DNS names, IPs,
 * cluster ids) contain none of the escaped characters: their keys are exactly the plain join.
 */

/**
 * One key segment: "%", "/", control characters and DEL percent-encoded (%XX, upper-case hex),
 * and the whole-segment values "_" (the cluster-scoped marker), "." and ".." encoded too.
 * Injective, so two inputs never share a key; the identity on every name ingest accepts.
 */
export function segment(s: string): string {
  if (s === "_" || s === "." || s === "..") return s.replace(/[._]/g, (c) => hex(c));
  return escapeChars(s, true);
}

/** Undoes `segment` (for code that reads a segment back out of a listed key). */
export function decodeSegment(s: string): string {
  return s.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

function hex(c: string): string {
  return `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a segment encodes
const needsEscape = /[%\x00-\x1f\x7f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a segment encodes
const needsEscapeWithSlash = /[%/\x00-\x1f\x7f]/;

/** Encodes "%", control characters, DEL and (when `slash`) "/"; the input itself when none occurs. */
function escapeChars(s: string, slash: boolean): string {
  // The common case, nothing to encode, is one native scan.
  if (!(slash ? needsEscapeWithSlash : needsEscape).test(s)) return s;
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25 || c < 0x20 || c === 0x7f || (slash && c === 0x2f)) {
      out += s.slice(from, i) + hex(s[i] as string);
      from = i + 1;
    }
  }
  return from === 0 ? s : out + s.slice(from);
}

/** A type URL keeps its "/" (`type.googleapis.com/<message>`: keys of served types stay as they are); "%" and control characters are encoded. */
function typeSegment(typeUrl: string): string {
  return escapeChars(typeUrl, false);
}

/** A pod dependency id is `<namespace>/<name>`: each part is its own segment. */
function podIdSegments(id: string): string {
  const slash = id.indexOf("/");
  return slash < 0 ? `${segment(id)}/` : `${segment(id.slice(0, slash))}/${segment(id.slice(slash + 1))}`;
}

function refId(on: "pod" | "ip" | "node", id: string): string {
  return on === "pod" ? podIdSegments(id) : segment(id);
}

const e = segment;

/** Zero-padded so that lexical order is numeric order. */
export function pad(n: number, width = 16): string {
  return Math.trunc(n).toString().padStart(width, "0");
}

export const keys = {
  /** One cluster's record of a service: Service. */
  service: (ns: string, host: string, cluster: string) => `svc/${e(ns)}/${e(host)}/${e(cluster)}`,
  /** Every cluster's record of one service. */
  servicePrefix: (ns: string, host: string) => `svc/${e(ns)}/${e(host)}/`,
  /**
   * One cluster's record of a host a ServiceEntry declares: ExternalService
   * (lib/registry/istio/external-services.ts). It lives beside the Kubernetes records of the same
   * host (one prefix, so the flush reads both registries at once and decides precedence); the last
   * segment is `<cluster>~<ServiceEntry name>`, which no Kubernetes record can have (a cluster id
   * never holds "~"), so a ServiceEntry never overwrites the Kubernetes Service of its host and
   * cluster, and two ServiceEntries declaring one host keep a record each.
   */
  externalService: (ns: string, host: string, cluster: string, serviceEntry: string) =>
    `svc/${e(ns)}/${e(host)}/${e(cluster)}~${e(serviceEntry)}`,
  /** All services. */
  services: () => "svc/",
  /**
   * Which ServiceEntries declare a host (any form: `api.example.com`, `*.example.com`, a
   * Kubernetes-form name declared from another namespace): ExternalHostRecord
   * (lib/ingest/external-hosts.ts), so a VirtualService naming the host reads one value instead of
   * listing every service.
   */
  externalHost: (host: string) => `sehosts/${e(host)}`,
  /** Present once the externalHost index covers every stored ServiceEntry record (a store of an older version is indexed once). */
  externalHostIndex: () => "meta/sehosts",
  /** Every service record of one namespace. */
  servicesIn: (ns: string) => `svc/${e(ns)}/`,
  /** Endpoints of one EndpointSlice (a shard piece): SlicePiece. */
  slice: (ns: string, host: string, cluster: string, slice: string) =>
    `eps/${e(ns)}/${e(host)}/${e(cluster)}/${e(slice)}`,
  /** All pieces of one service's shard from one cluster. */
  slicePrefix: (ns: string, host: string, cluster: string) => `eps/${e(ns)}/${e(host)}/${e(cluster)}/`,
  /** The EndpointShards of one service (all clusters): EndpointShardsRecord. */
  shards: (ns: string, host: string) => `shard/${e(ns)}/${e(host)}`,
  /**
   * One bounded piece of a large EndpointShards (EndpointShardsPiece, lib/shards/shard-pieces.ts):
   * piece `id` of the shard `shard` (a shardKeyString). Under the service's record, so one prefix
   * holds a service's head and pieces; the shard in the segment keeps two clusters' pieces apart.
   */
  shardPiece: (ns: string, host: string, shard: string, id: number) =>
    `shard/${e(ns)}/${e(host)}/${e(shard)}~${id}`,
  /** Every piece of one service's EndpointShards. */
  shardPiecePrefix: (ns: string, host: string) => `shard/${e(ns)}/${e(host)}/`,
  /** Every service's EndpointShards (what /debug/endpointShardz pages through; pieces too, see isShardPiece). */
  allShards: () => "shard/",
  /** The EndpointShards of every service of one namespace. */
  shardsIn: (ns: string) => `shard/${e(ns)}/`,
  /** A queued PushRequest: QueuedPush. Ordered by arrival. */
  pending: (at: number, id: string) => `push/pending/${pad(at)}-${e(id)}`,
  pendingPrefix: () => "push/pending/",
  /** Present while a flush runs; found at the start of a flush, it means the last one crashed. */
  flushing: () => "push/flushing",
  /**
   * The services whose ClusterLoadAssignments a flush held back before the registry was synced
   * (HeldEndpoints, lib/push/held-endpoints.ts): regenerated by one push once it is.
   */
  heldEndpoints: () => "push/held-endpoints",
  /**
   * The services whose ClusterLoadAssignments a flush held back while endpoints of theirs waited
   * for a pod whose cluster's Pod resync had not arrived (HeldEndpoints, lib/push/held-pods.ts).
   */
  heldForPods: () => "push/held-for-pods",
  /** A published xDS resource: StoredResource. */
  resource: (typeUrl: string, name: string) => `xds/${typeSegment(typeUrl)}/${e(name)}`,
  resourcePrefix: (typeUrl: string) => `xds/${typeSegment(typeUrl)}/`,
  /**
   * A resource as one namespace's view sees it when its content differs from the shared one
   * (lib/push/views.ts): StoredResource. Only namespaces the view table names have any.
   */
  viewResource: (view: string, typeUrl: string, name: string) =>
    `xdsv/${e(view)}/${typeSegment(typeUrl)}/${e(name)}`,
  /**
   * The view table (ViewTable, lib/resources/view-table.ts) as one value: the layout before it was split
   * into parts (viewHead, viewPart). Read only to migrate a store an older version wrote (lib/resources/view-store.ts).
   */
  viewTable: () => "meta/views",
  /** The cluster's MeshConfig fields edgepilot implements (StoredMeshConfig, lib/registry/mesh/mesh-config.ts). */
  meshConfig: () => "mesh/config",
  /** The cluster's MeshNetworks (StoredMeshNetworks, lib/registry/mesh/mesh-networks.ts). */
  meshNetworks: () => "mesh/networks",
  /** The networks as the last push resolved them (NetworkTable, lib/resources/network-table.ts). */
  networkTable: () => "meta/networks",
  /**
   * The effective mesh settings (EffectiveMesh, lib/registry/mesh/effective-mesh.ts) the last push
   * naming MeshConfig generated with, written only when they differ from Istio's defaults' or the
   * last record: a flush without the last push context in memory compares against it.
   */
  meshApplied: () => "meta/mesh",
  /**
   * Which parts hold the view table now and the content hash of each (ViewHead,
   * lib/resources/view-store.ts): a few kilobytes whatever the table's size; its version keys readers' caches.
   */
  viewHead: () => "views/head",
  /**
   * One part of the view table: entries of one section (sidecars, exports, overlays, virtualServices) whose ids hash
   * to `bucket`, the bucket's `part`-th slice of bounded size (ViewPart, lib/resources/view-store.ts).
   */
  viewPart: (section: string, bucket: number, part: number) => `views/${e(section)}/${bucket}/${part}`,
  /** What one service generated last time, so a push can remove what it no longer generates. */
  generated: (ns: string, host: string) => `gen/${e(ns)}/${e(host)}`,
  /** The push counter: PushVersion. */
  pushVersion: () => "meta/version",
  /**
   * The state's lifetime and start-up sync (lib/push/sync-state.ts SyncRecord): its instance id,
   * when it began, which clusters' resyncs arrived. Kept by a durable store, new in a memory one.
   */
  syncRecord: () => "meta/sync",
  /**
   * Present while an ingest batch is being committed (lib/ingest/atomic.ts): found at start-up, it
   * means the last process died mid-commit and the state may hold part of a batch (sync-tracker.ts).
   */
  commitMarker: () => "meta/committing",
  /**
   * The ingest lease of a store shared by several cores (lib/core/ingest-lease.ts): which batch
   * may read and commit now, and until when. Absent when none does.
   */
  ingestLease: () => "meta/ingest-lease",
  /** What push number `seq` changed: PushLogEntry. */
  pushLog: (seq: number) => `pushlog/${pad(seq)}`,
  /** Last seen resourceVersion of one object, and what it fed: ObjectRecord. "_" for cluster-scoped. */
  object: (cluster: string, kind: string, ns: string, name: string) =>
    `obj/${e(cluster)}/${e(kind)}/${ns === "" ? "_" : e(ns)}/${e(name)}`,
  /** Every object record, all clusters. */
  objects: () => "obj/",
  /**
   * An object whose latest version ingest refused by its kind's rules (RejectedRecord, lib/ingest/rejected.ts),
   * until a valid version or its deletion arrives. "_" for cluster-scoped.
   */
  rejected: (cluster: string, kind: string, ns: string, name: string) =>
    `rejected/${e(cluster)}/${e(kind)}/${ns === "" ? "_" : e(ns)}/${e(name)}`,
  /** Every refused object, all clusters (what /debug/configz?rejected pages through). */
  rejectedAll: () => "rejected/",
  objectPrefix: (cluster: string, kind: string) => `obj/${e(cluster)}/${e(kind)}/`,
  /**
   * One cluster's copy of an Istio networking config (VirtualService, DestinationRule, ServiceEntry,
   * WorkloadEntry):
   * StoredConfig (lib/ingest/kinds/istio-config.ts), the validated spec as it arrived.
   */
  config: (kind: string, ns: string, name: string, cluster: string) =>
    `cfg/${e(kind)}/${e(ns)}/${e(name)}/${e(cluster)}`,
  /** Every Istio config of every kind (what /debug/configz pages through). */
  configs: () => "cfg/",
  /** Every config of one kind, all namespaces and clusters (a flush reads them once). */
  configPrefix: (kind: string) => `cfg/${e(kind)}/`,
  /** Every config of one kind in one namespace, all clusters (the ServiceEntries a WorkloadEntry may join). */
  configsIn: (kind: string, ns: string) => `cfg/${e(kind)}/${e(ns)}/`,
  /** A Pod as endpoints need it: PodInfo. */
  pod: (cluster: string, ns: string, name: string) => `pod/${e(cluster)}/${e(ns)}/${e(name)}`,
  /** Every Pod of every cluster (what /debug/configz?mtls pages through). */
  pods: () => "pod/",
  /** Every Pod of one namespace in one cluster (the Pods a ServiceEntry's workloadSelector may select). */
  podsIn: (cluster: string, ns: string) => `pod/${e(cluster)}/${e(ns)}/`,
  /**
   * Which pods hold the IPs of one bucket (an IPv4 /24, an IPv6 /64: lib/ingest/pod-ip-index.ts):
   * PodIpBucketPart, entries [ip, namespace, name] sorted by IP. A bucket too large for one value
   * spans parts 0..n-1; part 0 says how many.
   */
  podIpBucket: (cluster: string, bucket: string, part: number) => `podips/${e(cluster)}/${e(bucket)}/${part}`,
  /**
   * Which pod holds an IP, one key per IP: { namespace, name }. The layout before pod IPs were
   * bucketed; a store written by an older version is migrated (pod-ip-index.ts).
   */
  podIp: (cluster: string, ip: string) => `podip/${e(cluster)}/${e(ip)}`,
  /** Every key of the one-key-per-IP layout, all clusters. */
  podIpsUnbucketed: () => "podip/",
  /** A Node's locality: NodeInfo. */
  node: (cluster: string, name: string) => `node/${e(cluster)}/${e(name)}`,
  /** A Namespace's labels: NamespaceInfo. */
  namespace: (cluster: string, name: string) => `ns/${e(cluster)}/${e(name)}`,
  /** Every Namespace of every cluster (the flush finds each cluster's system namespace among them). */
  namespaces: () => "ns/",
  /**
   * Reverse index, bucketed (lib/ingest/ref-index.ts): an endpoint's IP (when it names no pod) or
   * pod, grouped by bucket (an IPv4 /24, an IPv6 /64, a pod's namespace and owner prefix), to the
   * slices that depend on it: RefBucketPart. A bucket too large for one value spans parts
   * 0..n-1; part 0 says how many.
   */
  refBucket: (on: "pod" | "ip", cluster: string, bucket: string, part: number) =>
    `refs/${on}/${e(cluster)}/${e(bucket)}/${part}`,
  /**
   * Reverse index, one key per dependency and slice: { namespace, hostname }. Nodes use it (a
   * node is named by many slices, so one value per node would grow with the cluster); pods and
   * IPs used it before they were bucketed (a store written by an older version is migrated).
   */
  ref: (on: "pod" | "ip" | "node", cluster: string, id: string, ns: string, host: string, slice: string) =>
    `ref/${on}/${e(cluster)}/${refId(on, id)}/${e(ns)}/${e(host)}/${e(slice)}`,
  /** The slices that depend on one pod, IP or node. */
  refPrefix: (on: "pod" | "ip" | "node", cluster: string, id: string) =>
    `ref/${on}/${e(cluster)}/${refId(on, id)}/`,
  /** Every per-key reverse-index entry of one kind of dependency, all clusters. */
  refsOn: (on: "pod" | "ip" | "node") => `ref/${on}/`,
  /**
   * A proxy's bounded status record: ProxyRecord (lib/xds/proxy-record.ts). The node id comes
   * from the proxy: it is length-checked by the stream and escaped here, so it is one segment.
   */
  proxy: (nodeId: string) => `proxy/${e(nodeId)}`,
  proxyPrefix: () => "proxy/",
  /**
   * A gateway credential: one cluster's Secret as the gateway SDS serves it (StoredSecret,
   * lib/registry/kube/secret-store.ts). Never listed by a debug page.
   */
  secret: (cluster: string, ns: string, name: string) => `secret/${e(cluster)}/${e(ns)}/${e(name)}`,
  /** Every stored gateway credential, all clusters. */
  secrets: () => "secret/",
  /**
   * The certificate authority's self-signed root and its key (StoredCaRoot, lib/ca/self-signed.ts),
   * written once with a conditional put so instances starting together agree on one root.
   */
  caRoot: () => "ca/root",
} as const;

/** Whether a key listed under keys.allShards() is a piece (keys.shardPiece), not a service's record: it has one segment more. */
export function isShardPiece(key: string): boolean {
  let slashes = 0;
  for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) slashes++;
  return key.startsWith("shard/") && slashes === 3;
}
