/**
 * Serving through views, the one place every read path (ADS SotW and Delta, Fetch, REST, Poll and
 * Watch) resolves names for a proxy's namespace: a name the view overlays is read from
 * keys.viewResource(), a name it hides or whose service it may not see (shared or overlay) does
 * not exist, anything else is the shared resource. Pushes: a change of one view reaches that
 * view's streams only, and a shared change to a name a view overlays or hides never reaches it.
 * Proxies of namespaces without a view of their own read the shared source unwrapped (no cost when
 * no view exists). Every node's ClusterLoadAssignments then pass its network view
 * (network-views.ts: split-horizon EDS), which serves the shared ones while the mesh has no gateway.
 *
 * Which set a node gets (CONTRACT: GENERATOR): an Istio `sidecar~` node id whose metadata GENERATOR
 * is not `grpc` gets Envoy sidecar resources (lib/xds/sidecar-snapshots.ts: assignments shared,
 * clusters, listeners and routes from its class's snapshot); a `router~` node id whose GENERATOR is
 * not `grpc` gets gateway resources from the Istio Gateways selecting it (lib/xds/gateway-snapshots.ts,
 * the same split); any other node (GENERATOR=grpc, an id that is not an Istio node id) the
 * proxyless set. A proxyless stream pays
 * nothing for it: no lookup, no promise more per push. A proxyless `sidecar~` node's gRPC server
 * listeners (`xds.istio.io/grpc/lds/inbound/...`) are derived for it beside the shared set
 * (proxyless-inbound.ts); only a stream that asked for one re-derives them on a push.
 */

import { nodeClaim } from "../auth/identity.ts";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import {
  defaultMesh,
  type MeshEnvOverrides,
  meshOverrides,
  readEffectiveMesh,
} from "../registry/mesh/effective-mesh.ts";
import type { Push, ResourceChange } from "../resources/changes.ts";
import type { SidecarMeshSettings } from "../resources/generators/sidecar/types.ts";
import { NETWORKS_CHANGED } from "../resources/network-table.ts";
import type { StoredResource } from "../resources/types.ts";
import { createViewTableReader } from "../resources/view-store.ts";
import { type NamespaceView, resolveView, type ViewTable } from "../resources/view-table.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
// Gateway credentials (SDS) for router~ nodes: bound, served and pushed by gateway-secrets.ts.
import {
  bindGatewaySecrets,
  type GatewaySecretsBinding,
  gatewaySecretsSource,
  takesSecretChange,
  withSecretChanges,
} from "./gateway-secrets.ts";
import { createGatewaySnapshots, type GatewayBinding, type GatewaySnapshots } from "./gateway-snapshots.ts";
import { gatewaySource } from "./gateway-source.ts";
import { createNetworkViews, type NetworkBinding, type NetworkViews } from "./network-views.ts";
import {
  createProxylessInbound,
  type InboundBinding,
  inboundSource,
  type ProxylessInbound,
} from "./proxyless-inbound.ts";
import { createSidecarSnapshots, type SidecarBinding, type SidecarSnapshots } from "./sidecar-snapshots.ts";
import { sidecarSource } from "./sidecar-source.ts";
import type { ResourceSource } from "./source.ts";

/**
 * A node's view: its namespace's, and, for an Envoy sidecar, what it is served sidecar resources as;
 * for a proxyless gRPC node, the binding its server listeners are derived through; for every node
 * served resources the host generated, its network view (assignments through network-views.ts).
 */
export interface NodeView extends NamespaceView {
  readonly sidecar?: SidecarBinding;
  /** A gateway proxy's binding: what it is served gateway resources as. */
  readonly gateway?: GatewayBinding;
  readonly inbound?: InboundBinding;
  readonly network?: NetworkBinding;
  /** A gateway's claim on its credentials (SDS, gateway-secrets.ts). */
  readonly secrets?: GatewaySecretsBinding;
}

/** The views of one host; also a FeedHub: a push that changes a view makes the next lookup re-read. */
export interface Views {
  /** The view of proxies in `namespace`. */
  forNamespace(namespace: string): Promise<NamespaceView>;
  /**
   * The view of a node (its namespace as lib/auth/identity.ts parses it; none: the shared view),
   * bound to sidecar resources when the node is an Envoy sidecar (see the module comment).
   */
  forNode(node: Node | undefined): Promise<NodeView>;
  /** `base` as `view` sees it (base itself for the shared view; a sidecar's snapshot beside it). */
  source(view: NodeView, base: ResourceSource): ResourceSource;
  /**
   * A push's changes as streams of `view` take them; undefined when the push changed what the view
   * may see (or named nothing): re-resolve the view and re-read everything. Cached per array.
   */
  changesFor(
    view: NodeView,
    changes: readonly ResourceChange[] | undefined,
  ): readonly ResourceChange[] | undefined;
  /** Whether a change concerns `view` at all (Poll/Watch wake-ups). */
  concerns(view: NodeView, change: Pick<ResourceChange, "name" | "view">): boolean;
  /** Whether a Poll/Watch of `view` wakes for any push, whatever names it asked for (a sidecar's set may change). */
  wakes(view: NodeView): boolean;
  /** The sidecar resources of this host. */
  readonly sidecars: SidecarSnapshots;
  /** The gateway resources of this host. */
  readonly gateways: GatewaySnapshots;
  /** The proxyless server listeners of this host. */
  readonly inbound: ProxylessInbound;
  /** The network views of this host (split-horizon EDS). */
  readonly networks: NetworkViews;
  /** Notes a push (idempotent per push): a view change, or an unnamed push, drops the cached table. */
  publish(push: Push): void;
  /** Streams held (the Views hold none; FeedHub). */
  readonly open: number;
}

/** Options: `cache` false re-reads the table on every lookup (a host that hears no pushes). */
export interface ViewsOptions {
  store: Store;
  cache?: boolean;
  /**
   * Sidecar settings beside Istio's defaults (DOMAIN_SUFFIX's `domainSuffix`); the MeshConfig ones
   * come from each push context's effective mesh, where `trustDomain` and `enableAutoMtls` given
   * here count as explicitly set.
   */
  sidecarMesh?: Partial<SidecarMeshSettings>;
  /** The mesh settings the environment set explicitly, as the flush applies them. */
  meshEnv?: MeshEnvOverrides;
  /**
   * False: every node reads the store's resources as they are, sidecar or not, whatever its network
   * (the agent's local server: its cache already holds what the upstream generated for its proxy).
   * Default true.
   */
  sidecarResources?: boolean;
  /** The most derived network-view assignments kept (network-views.ts maxEntries). */
  maxNetworkEntries?: number;
  /** Where a gateway refused a credential, or a server left out while merging, is logged; default: nowhere. */
  log?: (line: string) => void;
}

/** Whether `c` is a change of what a view may see (a marker, `name` ""), for `namespace`'s proxies. */
function markerFor(c: Pick<ResourceChange, "name" | "view">, namespace: string): boolean {
  return c.view !== undefined && c.name === "" && (c.view === "*" || c.view === namespace);
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Creates the views of one host over `store` (the table through view-store.ts, keys.viewResource()). */
export function createViews(options: ViewsOptions): Views {
  const { store } = options;
  const cache = options.cache ?? true;
  const tables = createViewTableReader(store);
  let table: Promise<ViewTable> | undefined;
  let loading = false;
  const seen = new WeakSet<Push>();
  // Per push, view key and namespace: the filtered changes (1,000 streams of one view filter once).
  type PerView = Map<string, Map<string, readonly ResourceChange[] | undefined>>;
  const filtered = new WeakMap<readonly ResourceChange[], PerView>();
  const resolved = new Map<string, NamespaceView>();
  const roots = new WeakMap<ViewTable, string>();
  const rootOf = (t: ViewTable) => roots.get(t) ?? defaultMesh.rootNamespace;
  const sidecars = createSidecarSnapshots({
    store,
    cache,
    ...(options.sidecarMesh && { mesh: options.sidecarMesh }),
    ...(options.meshEnv && { meshEnv: options.meshEnv }),
  });
  const inbound = createProxylessInbound({ snapshots: sidecars });
  const gateways = createGatewaySnapshots({
    sidecars,
    ...(options.log && { log: (line: string) => options.log?.(`xds: gateway: ${line}`) }),
    ...(options.sidecarMesh && { mesh: options.sidecarMesh }),
  });
  const networks = createNetworkViews({
    store,
    cache,
    ...(options.maxNetworkEntries !== undefined && { maxEntries: options.maxNetworkEntries }),
  });

  // The root namespace (whose Sidecar applies mesh-wide) is read with the table: a push changing the
  // mesh settings marks every view, so both are read again together.
  const read = (): Promise<ViewTable> => {
    if (cache && table) return table;
    loading = true;
    const p = Promise.all([tables.read(), readEffectiveMesh(store)]).then(
      ([t, mesh]) => {
        roots.set(t, mesh.rootNamespace);
        loading = false;
        return t;
      },
      (err: unknown) => {
        loading = false;
        table = undefined;
        throw err;
      },
    );
    if (cache) {
      table = p;
      resolved.clear();
    }
    return p;
  };

  const forNamespace = async (namespace: string): Promise<NamespaceView> => {
    const t = await read();
    if (!cache) return resolveView(t, namespace, rootOf(t));
    let v = resolved.get(namespace);
    if (!v) {
      v = resolveView(t, namespace, rootOf(t));
      resolved.set(namespace, v);
    }
    return v;
  };

  const drop = () => {
    // Streams woken by one push each call this: the first drops the table, the rest share its re-read.
    if (!loading) table = undefined;
  };

  return {
    forNamespace,
    async forNode(node) {
      const namespace = namespaceOf(node);
      const view = await forNamespace(namespace);
      if (options.sidecarResources === false || node === undefined) return view;
      const network = networks.bind(node);
      const sidecar = sidecars.bind(node, namespace);
      if (sidecar) return { ...view, sidecar, network };
      const secrets = bindGatewaySecrets(node, namespace);
      const gateway = gateways.bind(node, namespace);
      if (gateway) return { ...view, gateway, network, ...(secrets && { secrets }) };
      if (secrets) return { ...view, network, secrets };
      const server = inbound.bind(node, namespace);
      return server ? { ...view, inbound: server, network } : { ...view, network };
    },
    source(view, base) {
      const viewed = view.key === "" ? base : viewedSource(store, view, base);
      const networked = view.network ? networks.source(view.network, viewed) : viewed;
      const shared = view.secrets
        ? gatewaySecretsSource(store, view.secrets, networked, options.log ?? (() => {}))
        : networked;
      if (view.sidecar) return sidecarSource(sidecars, view.sidecar, shared);
      if (view.gateway) return gatewaySource(gateways, view.gateway, shared);
      return view.inbound ? inboundSource(inbound, view.inbound, shared) : shared;
    },
    sidecars,
    gateways,
    inbound,
    networks,
    // Any push may change a sidecar's or a gateway's set (an assignment its own instances come
    // from, too), or a proxyless server's listeners: its Poll or Watch recomputes, and answers only when what it
    // subscribes to changed.
    wakes: (view) =>
      view.sidecar !== undefined || view.gateway !== undefined || (view.inbound?.names.size ?? 0) > 0,
    changesFor(view, changes) {
      if (changes === undefined) return undefined;
      let perView = filtered.get(changes);
      if (perView === undefined) {
        perView = new Map();
        filtered.set(changes, perView);
      }
      // Markers name namespaces, not view keys: a namespace that gains a view must hear of it.
      let byNamespace = perView.get(view.key);
      if (byNamespace === undefined) {
        byNamespace = new Map();
        perView.set(view.key, byNamespace);
      }
      let out: readonly ResourceChange[] | undefined;
      if (byNamespace.has(view.namespace)) out = byNamespace.get(view.namespace);
      else {
        out = filterChanges(view, changes);
        byNamespace.set(view.namespace, out);
      }
      const taken = view.network ? networks.changes(changes, out) : out;
      return view.secrets ? withSecretChanges(view.secrets, changes, taken) : taken;
    },
    concerns(view, c) {
      if (c.view === undefined) return true;
      if (view.secrets && takesSecretChange(view.secrets, c)) return true;
      if (c.view === NETWORKS_CHANGED) return view.network !== undefined && c.name === "";
      return c.name === "" ? markerFor(c, view.namespace) : c.view === view.key;
    },
    publish(push) {
      // Once per push, not per stream: the proxyless fan-out pays no lookup more for it.
      if (seen.has(push)) return;
      seen.add(push);
      sidecars.publish(push);
      gateways.publish(push);
      networks.publish(push);
      const { changes } = push;
      const marker = (c: ResourceChange) =>
        c.view !== undefined && c.view !== NETWORKS_CHANGED && c.name === "";
      if (changes === undefined || changes.some(marker)) drop();
    },
    open: 0,
  };
}

/** The node's namespace (nodeClaim); "" when the node names none or is not an Istio node id. */
function namespaceOf(node: Node | undefined): string {
  if (!node) return "";
  const claim = nodeClaim(node);
  return claim.ok ? claim.namespace : "";
}

/** Changes as `view` takes them: undefined when one changes what it may see; else the ones that concern it. */
function filterChanges(
  view: NamespaceView,
  changes: readonly ResourceChange[],
): readonly ResourceChange[] | undefined {
  let out: ResourceChange[] | undefined;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as ResourceChange;
    if (markerFor(c, view.namespace)) return undefined;
    const keep =
      c.view !== undefined
        ? c.name !== "" &&
          c.view === view.key &&
          (c.service === undefined || view.visible?.(c.service) !== false)
        : view.key === "" ||
          (!view.overlay(c.typeUrl)?.has(c.name) &&
            !view.hidden(c.typeUrl)?.has(c.name) &&
            (c.service === undefined || view.visible === null || view.visible(c.service)));
    if (keep && out === undefined) continue;
    if (!keep && out === undefined) out = changes.slice(0, i);
    if (keep) out?.push(c);
  }
  return out ?? changes;
}

/** `base` as a view with its own key sees it (see the module comment). */
function viewedSource(store: Store, view: NamespaceView, base: ResourceSource): ResourceSource {
  const visible = (r: StoredResource) => view.visible === null || view.visible(r.service);
  const overlays = async (typeUrl: string, names: Iterable<string>): Promise<StoredResource[]> => {
    const wanted = [...names].map((n) => keys.viewResource(view.key, typeUrl, n));
    if (wanted.length === 0) return [];
    return [...(await store.getMany<StoredResource>(wanted)).values()].map((e) => e.value);
  };
  return {
    async get(typeUrl, names) {
      const overlay = view.overlay(typeUrl);
      const hidden = view.hidden(typeUrl);
      const shared: string[] = [];
      const own: string[] = [];
      for (const n of names) {
        if (overlay?.has(n)) own.push(n);
        else if (!hidden?.has(n)) shared.push(n);
      }
      const found = (shared.length > 0 ? await base.get(typeUrl, shared) : []).filter(visible);
      if (own.length > 0) found.push(...(await overlays(typeUrl, new Set(own))).filter(visible));
      return found.sort(byName);
    },
    async list(typeUrl) {
      const overlay = view.overlay(typeUrl);
      const hidden = view.hidden(typeUrl);
      const found = (await base.list(typeUrl)).filter(
        (r) => !overlay?.has(r.name) && !hidden?.has(r.name) && visible(r),
      );
      if (overlay) found.push(...(await overlays(typeUrl, overlay)).filter(visible));
      return found.sort(byName);
    },
  };
}

/**
 * The Views options a host derives from its registry config: the domain suffix, and the mesh
 * settings its environment set explicitly (trust domain, auto mTLS, discovery selectors), which win
 * over the stored MeshConfig as the flush applies it.
 */
export function sidecarViewOptions(
  registry: Parameters<typeof meshOverrides>[0] & { domainSuffix: string },
): Pick<ViewsOptions, "sidecarMesh" | "meshEnv"> {
  return { sidecarMesh: { domainSuffix: registry.domainSuffix }, meshEnv: meshOverrides(registry) };
}
