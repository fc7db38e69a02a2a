/** Identities: ShardKey (who reported endpoints) and ConfigKey (what a push touches). */

/** The registry that reported a shard of endpoints. */
export type Provider = "Kubernetes" | "External";

/** Istio's ShardKey: endpoints of one service are sharded by the cluster that reported them. */
export interface ShardKey {
  provider: Provider;
  cluster: string;
}

/** The string form `<provider>/<cluster>`, used as a map key and in store keys. */
export function shardKeyString(k: ShardKey): string {
  return `${k.provider}/${k.cluster}`;
}

/** Parses `<provider>/<cluster>`; the cluster may itself contain slashes. */
export function parseShardKey(s: string): ShardKey {
  const i = s.indexOf("/");
  const provider = s.slice(0, i);
  if (i < 0 || (provider !== "Kubernetes" && provider !== "External")) {
    throw new Error(`not a shard key: ${JSON.stringify(s)}`);
  }
  return { provider, cluster: s.slice(i + 1) };
}

/** Kinds of configuration a push can name. Services and endpoints are both `ServiceEntry`, as in Istio. */
export type ConfigKind =
  | "ServiceEntry"
  | "DestinationRule"
  | "VirtualService"
  | "Sidecar"
  | "PeerAuthentication"
  | "AuthorizationPolicy"
  /** An Istio Gateway (networking.istio.io): the gateway proxies it selects. */
  | "Gateway"
  /** The `istio` ConfigMap's `mesh` (or MESH_CONFIG_FILE): a mesh-wide change. */
  | "MeshConfig"
  /** The `istio` ConfigMap's `meshNetworks` (or MESH_NETWORKS_FILE). */
  | "MeshNetworks"

  /** A gateway credential (Kubernetes Secret): SDS only, to the gateway proxies holding its names. */
  | "Secret"
  /** A system namespace whose network label changed (namespace = name): its cluster's network. */
  | "Namespace";

/** Istio's ConfigKey: one piece of configuration a push touches. For services, name = hostname. */
export interface ConfigKey {
  kind: ConfigKind;
  namespace: string;
  name: string;
}

/** `<kind>/<namespace>/<name>`: stable, so sets of keys serialize and compare as strings. */
export function configKeyString(k: ConfigKey): string {
  return `${k.kind}/${k.namespace}/${k.name}`;
}

/** Parses the string form back; throws on anything else. */
export function parseConfigKey(s: string): ConfigKey {
  // The first two "/" end kind and namespace; the name is the rest, "/" included.
  const k = s.indexOf("/");
  const n = k < 0 ? -1 : s.indexOf("/", k + 1);
  if (k <= 0 || n < 0) throw new Error(`not a config key: ${JSON.stringify(s)}`);
  return { kind: s.slice(0, k) as ConfigKind, namespace: s.slice(k + 1, n), name: s.slice(n + 1) };
}

/** The ConfigKey for a service hostname, as Istio's EDSUpdate and SvcUpdate use it. */
export function serviceConfigKey(hostname: string, namespace: string): ConfigKey {
  return { kind: "ServiceEntry", namespace, name: hostname };
}
