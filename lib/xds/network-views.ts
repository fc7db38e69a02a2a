/**
 * Split-horizon EDS at serving time (lib/resources/network-assignment.ts): every node is bound to
 * its network view (NETWORK, REQUESTED_NETWORK_VIEW, its IP family) and reads ClusterLoadAssignments
 * through it; every other type, and every assignment while the mesh has no gateway, is the shared
 * resource itself. A derived assignment is built once per (view key, name, shared version, table)
 * and shared by every proxy of the view on this host, in a bounded cache (a client chooses its
 * metadata: least recently used entries go first, and a view key too long to hold is derived per
 * read). The network table (keys.networkTable()) is read once and kept until a push says it
 * changed (NETWORKS_CHANGED) or names nothing; such a push makes bound streams re-read what they
 * hold (their sessions send only what changed). While gateways exist, a push's assignment changes
 * reach bound streams without their shared bytes, so sessions read them through the view.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { Push, ResourceChange } from "../resources/changes.ts";
import { type GatewayIndex, indexGateways } from "../resources/gateway-index.ts";
import { parseSidecarNode } from "../resources/generators/sidecar/proxy.ts";
import { viewResource } from "../resources/network-assignment.ts";
import { NETWORKS_CHANGED, type NetworkTable } from "../resources/network-table.ts";
import { type NetworkView, networkViewKey, networkViewOf } from "../resources/network-view.ts";
import type { StoredResource } from "../resources/types.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { ResourceSource } from "./source.ts";

/** A node's network view, fixed for its stream. */
export interface NetworkBinding {
  readonly view: NetworkView;
  /** networkViewKey(view): equal for every proxy of the view. */
  readonly key: string;
}

/** The network views of one host. */
export interface NetworkViews {
  /** The binding of `node` (a node without metadata: no network, every network visible). */
  bind(node: Pick<Node, "id" | "metadata">): NetworkBinding;
  /** `base` with its assignments as the binding's view sees them. */
  source(binding: NetworkBinding, base: ResourceSource): ResourceSource;
  /**
   * A push's changes as a bound stream takes them, given `raw` (the push's) and `taken` (what its
   * namespace view keeps of them): undefined (re-read everything) when the network table changed.
   */
  changes(
    raw: readonly ResourceChange[],
    taken: readonly ResourceChange[] | undefined,
  ): readonly ResourceChange[] | undefined;
  /** Notes a push: NETWORKS_CHANGED, or a push naming nothing, drops the cached table. */
  publish(push: Push): void;
}

/** Options: `cache` false re-reads the table on every read (a host that hears no pushes). */
export interface NetworkViewsOptions {
  store: Store;
  cache?: boolean;
  /**
   * The most derived assignments kept (then the least recently used go). Default 65536: room for
   * every assignment of a large mesh in a few views, so proxies of a view never derive them again.
   */
  maxEntries?: number;
  /** The longest view key whose assignments are kept (longer: derived per read). Default 1024. */
  maxKeyChars?: number;
}

/** Whether `changes` carry the network table's change marker. */
export const changesNetworks = (changes: readonly ResourceChange[]): boolean =>
  changes.some((c) => c.view === NETWORKS_CHANGED && c.name === "");

/** The node's IPs: an Istio node id's and INSTANCE_IPS, else INSTANCE_IPS alone. */
function nodeIps(node: Pick<Node, "id" | "metadata">): readonly string[] {
  const parsed = parseSidecarNode(node.id, node.metadata);
  if (parsed.ok) return parsed.proxy.ipAddresses;
  const listed = node.metadata?.INSTANCE_IPS;
  return typeof listed === "string" ? listed.split(",").map((s) => s.trim()) : [];
}

interface Derived {
  gateways: GatewayIndex;
  made: Promise<StoredResource>;
}

/** Creates the network views of one host over `store` (see the module comment). */
export function createNetworkViews(options: NetworkViewsOptions): NetworkViews {
  const { store } = options;
  const cache = options.cache ?? true;
  const maxEntries = options.maxEntries ?? 65_536;
  const maxKeyChars = options.maxKeyChars ?? 1024;
  let known: GatewayIndex | undefined;
  let loading: Promise<GatewayIndex> | undefined;
  const derived = new Map<string, Derived>();
  const marked = new WeakMap<readonly ResourceChange[], boolean>();
  const stripped = new WeakMap<readonly ResourceChange[], readonly ResourceChange[]>();

  const gateways = (): GatewayIndex | Promise<GatewayIndex> => {
    if (cache && known) return known;
    if (cache && loading) return loading;
    const p = store.get<NetworkTable>(keys.networkTable()).then((e) => indexGateways(e?.value));
    if (!cache) return p;
    loading = p;
    p.then(
      (index) => {
        if (loading === p) {
          known = index;
          loading = undefined;
        }
      },
      () => {
        if (loading === p) loading = undefined;
      },
    );
    return p;
  };

  const derive = (binding: NetworkBinding, shared: StoredResource, index: GatewayIndex) => {
    if (binding.key.length > maxKeyChars) return viewResource(shared, binding.view, index);
    const id = `${binding.key}\n${shared.name}\n${shared.version}`;
    const hit = derived.get(id);
    if (hit && hit.gateways === index) {
      derived.delete(id);
      derived.set(id, hit);
      return hit.made;
    }
    const made = Promise.resolve(viewResource(shared, binding.view, index));
    made.catch(() => derived.delete(id));
    derived.delete(id);
    derived.set(id, { gateways: index, made });
    if (derived.size > maxEntries) derived.delete(derived.keys().next().value as string);
    return made;
  };

  const through = async (binding: NetworkBinding, read: Promise<StoredResource[]>) => {
    const [index, found] = await Promise.all([gateways(), read]);
    if (!index.multiNetwork) return found;
    return Promise.all(found.map((r) => derive(binding, r, index)));
  };

  return {
    bind(node) {
      const view = networkViewOf(node.metadata, nodeIps(node));
      return { view, key: networkViewKey(view) };
    },
    source(binding, base) {
      return {
        get: (typeUrl, names) =>
          typeUrl === TypeUrl.endpoint
            ? through(binding, base.get(typeUrl, names))
            : base.get(typeUrl, names),
        list: (typeUrl) =>
          typeUrl === TypeUrl.endpoint ? through(binding, base.list(typeUrl)) : base.list(typeUrl),
      };
    },
    changes(raw, taken) {
      let mark = marked.get(raw);
      if (mark === undefined) {
        mark = changesNetworks(raw);
        marked.set(raw, mark);
      }
      if (mark || taken === undefined) return undefined;
      // No gateway: the shared bytes are what every view is served.
      if (cache && known && !known.multiNetwork) return taken;
      let out = stripped.get(taken);
      if (out === undefined) {
        out = taken.some(carriesAssignment) ? taken.map((c) => (carriesAssignment(c) ? bare(c) : c)) : taken;
        stripped.set(taken, out);
      }
      return out;
    },
    publish(push) {
      if (push.changes !== undefined && !changesNetworks(push.changes)) return;
      known = undefined;
      loading = undefined;
    },
  };
}

const carriesAssignment = (c: ResourceChange): boolean =>
  c.typeUrl === TypeUrl.endpoint && c.body !== undefined;

/** The change without its shared bytes: a session reads the name through the stream's view. */
function bare(c: ResourceChange): ResourceChange {
  const { body: _body, ...rest } = c;
  return rest;
}
