/**
 * The Envoy sidecar resources one host serves (CDS, LDS, RDS; EDS stays the shared
 * ClusterLoadAssignments), built lazily from the push context (lib/resources/push-context.ts, read as
 * sidecar-scope.ts) and shared by class, never per proxy when a class will do.
 *
 * Sharing rule. The outbound part (outbound clusters, BlackHole/Passthrough/InboundPassthrough,
 * outbound listeners, virtualOutbound, every RouteConfiguration) is one snapshot per OUTBOUND CLASS:
 * the proxy's namespace (its view: Sidecar egress, exportTo, the VirtualServices and
 * DestinationRules chosen there), the Sidecar chosen for it, and what the generators read of the
 * proxy beside it: its DNS domain (route domains), its CLUSTER_ID (which record's VIPs), its IP
 * family (DNS lookup family, bind addresses) and INTERCEPTION_MODE (transparent listeners). The
 * inbound part (`inbound|<port>||` clusters, virtualInbound, the listeners a Sidecar's ingress binds)
 * is one snapshot per INBOUND CLASS: the outbound class (whose Sidecar's ingress listeners, when it
 * has any, replace the instances' ports) plus the proxy's instance signature, every field cluster-inbound.ts and
 * listener-virtual.ts read of its service instances (host, name, namespace, mesh-external, service
 * port, protocol, target port), its IPs when a Sidecar ingress listener sends to the pod's own
 * IP (a wildcard defaultEndpoint), and its security: its effective PeerAuthentication (mode and
 * port modes) and the AuthorizationPolicies that select it, by name (so its labels count only
 * through policies with a selector). Both caches are LRU-bounded (maxSidecarClasses each).
 *
 * Freshness. The context is the one the flush of a push built when it ran in this process (the
 * push's `context`), else derived or loaded here with the same loader. A push that
 * changes only ClusterLoadAssignments keeps every snapshot (their services' shards are read again
 * for the instance index, and a DNS service's change, whose clusters carry endpoints inline, or a
 * Passthrough one's, whose auto mTLS follows its endpoints, drops the outbound ones); any other push (a Cluster, Listener or Route change, a view marker, an
 * unnamed push) drops them all: rebuilt when first asked. A host that hears no pushes (`cache`
 * false) keys them by the store's push version (keys.pushVersion()) instead.
 * Versions are content hashes (toStored): the same mesh gives the same versions on every instance.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import type { SecurityPolicies, WorkloadAuthorization } from "../registry/istio/security.ts";
import type { SidecarModel } from "../registry/istio/sidecar.ts";
import type { MeshEnvOverrides } from "../registry/mesh/effective-mesh.ts";
import type { Push, PushVersion, ResourceChange } from "../resources/changes.ts";
import type { GatewayExtrasSource } from "../resources/gateway-configs.ts";
import { sidecarClusters } from "../resources/generators/sidecar/cluster.ts";
import { inboundClusters } from "../resources/generators/sidecar/cluster-inbound.ts";
import { sidecarListeners } from "../resources/generators/sidecar/listener.ts";
import {
  boundInboundListeners,
  VIRTUAL_INBOUND,
  virtualInboundListener,
} from "../resources/generators/sidecar/listener-virtual.ts";
import { parseSidecarNode } from "../resources/generators/sidecar/proxy.ts";
import { sidecarRouteConfigurations } from "../resources/generators/sidecar/route.ts";
import {
  defaultSidecarMesh,
  type ServiceInstance,
  type SidecarInputs,
  type SidecarMeshSettings,
  type SidecarProxy,
} from "../resources/generators/sidecar/types.ts";
import {
  contextFits,
  loadPushContext,
  type PushContext,
  type PushContextOptions,
  updatePushContext,
} from "../resources/push-context.ts";
import type { Generated, ServiceView, StoredResource } from "../resources/types.ts";
import { toStored } from "../resources/version.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { keys, type Store } from "../store/index.ts";
import { inboundKey, instanceSignature, outboundKey, securitySignature } from "./sidecar-classes.ts";
import { envoyInboundAuthz, type InboundAuthzBuilder, sidecarMeshOf } from "./sidecar-mesh.ts";
import { type SidecarScope, sidecarScope } from "./sidecar-scope.ts";

/** How many times one read starts over when pushes make the context it read stale meanwhile. */
const maxWorldRereads = 3;

/** The most outbound classes, and inbound classes, one host keeps built (each an LRU). */
export const maxSidecarClasses = 256;

/** A stream (or one read) served sidecar resources: its proxy and outbound class. */
export interface SidecarBinding {
  readonly proxy: SidecarProxy;
  readonly outboundKey: string;
  /** The instance signature of its last read (undefined before): an EDS push re-checks it. */
  signature: string | undefined;
  /** The snapshots' epoch when it last read (undefined before): a push since that made them stale re-reads all. */
  epoch: number | undefined;
}

/**
 * Options; `mesh` overrides Istio's defaults for what MeshConfig does not set (the domain suffix,
 * connect timeout); the MeshConfig fields come from each push context's effective mesh, under
 * `meshEnv` and the `trustDomain` and `enableAutoMtls` of `mesh` as explicitly set values. `authz`
 * turns a workload's AuthorizationPolicies into the RBAC filters of its inbound chains (default:
 * envoyInboundAuthz).
 */
export interface SidecarSnapshotOptions {
  store: Store;
  cache: boolean;
  mesh?: Partial<SidecarMeshSettings>;
  authz?: InboundAuthzBuilder;
  meshEnv?: MeshEnvOverrides;
  maxClasses?: number;
  /** Gateways and VirtualServices read beside the stored ones by every context (push-context.ts). */
  gatewayExtras?: GatewayExtrasSource;
}

/** The sidecar resources of one host. */
export interface SidecarSnapshots {
  /** The binding of `node` in `namespace` (its view's), or undefined when it gets the proxyless set. */
  bind(node: Pick<Node, "id" | "metadata"> | undefined, namespace: string): SidecarBinding | undefined;
  /** The binding's CDS, LDS or RDS resources, sorted by name. */
  resources(binding: SidecarBinding, typeUrl: string): Promise<readonly StoredResource[]>;
  /** Notes a push (once per push: Views.publish calls it): what it makes stale. */
  publish(push: Push): void;
  /** Whether a push changed ClusterLoadAssignments only and is no refresh (lib/push/push-refresh.ts): snapshots then stand. */
  endpointsOnly(push: Push): boolean;
  /**
   * Whether a push made the snapshots stale since the binding's last read: its stream re-reads
   * everything, whatever changes it was handed (a stream gathering pushes hands them as one list).
   */
  staleFor(binding: SidecarBinding): boolean;
  /** After an EDS-only push: whether the binding's service instances changed (re-read its inbound side). */
  instancesChanged(binding: SidecarBinding): Promise<boolean>;
  /**
   * The scope of the context the snapshots read now (proxyless server listeners derive from it too,
   * so one host reads one context per push whoever asks).
   */
  scope(): Promise<SidecarScope>;
  /** Classes built now (tests, benches). */
  readonly size: { outbound: number; inbound: number };
}

type Snapshot = ReadonlyMap<string, readonly StoredResource[]>;
interface Outbound {
  services: readonly ServiceView[];
  resources: Snapshot;
}

const isEds = (c: ResourceChange) => c.typeUrl === TypeUrl.endpoint && c.name !== "";

/** Creates the sidecar snapshots of one host (see the module comment). */
export function createSidecarSnapshots(options: SidecarSnapshotOptions): SidecarSnapshots {
  const { store } = options;
  const base: SidecarMeshSettings = { ...defaultSidecarMesh, ...options.mesh };
  const authz = options.authz ?? envoyInboundAuthz;
  const max = options.maxClasses ?? maxSidecarClasses;
  const meshEnv: MeshEnvOverrides = {
    ...(options.mesh?.trustDomain !== undefined && { trustDomain: options.mesh.trustDomain }),
    ...(options.mesh?.enableAutoMtls !== undefined && { enableAutoMtls: options.mesh.enableAutoMtls }),
    ...options.meshEnv,
  };
  const contextOptions: PushContextOptions = {
    domainSuffix: base.domainSuffix,
    ...(Object.keys(meshEnv).length > 0 && { meshEnv }),
    ...(options.gatewayExtras && { gatewayExtras: options.gatewayExtras }),
  };
  // One settings object per context (its scope), so every class of a push builds with the same.
  const meshes = new WeakMap<SidecarScope, SidecarMeshSettings>();
  const meshFor = (w: SidecarScope) => {
    let m = meshes.get(w);
    if (!m) {
      m = sidecarMeshOf(base, w.mesh);
      meshes.set(w, m);
    }
    return m;
  };
  let current: { at: number | undefined; ctx: Promise<PushContext> } | undefined;
  // Services whose shards changed since the outbound classes were built: a DNS one drops them.
  let dnsCheck = new Set<string>();
  const outbound = new Map<string, Promise<Outbound>>();
  const inbound = new Map<string, Promise<Snapshot>>();
  const edsOnly = new WeakMap<readonly ResourceChange[], boolean>();

  // Bumped whenever what is built goes stale: a read that began before never caches into the new state.
  let generation = 0;
  // Bumped by every push that makes everything stale (a binding that read before re-reads all).
  let epoch = 0;
  const clear = () => {
    generation++;
    outbound.clear();
    inbound.clear();
  };
  const stale = () => {
    epoch++;
    current = undefined;
    dnsCheck = new Set();
    clear();
  };

  const use = (at: number | undefined, ctx: Promise<PushContext>) => {
    const entry = { at, ctx };
    current = entry;
    // A failed read is not kept: the next ask loads the whole context again.
    ctx.catch(() => {
      if (current === entry) current = undefined;
    });
    return entry;
  };

  const load = (at: number | undefined) =>
    use(at, loadPushContext(store, { ...contextOptions, ...(at !== undefined && { version: at }) }));

  const currentScope = async (): Promise<SidecarScope> => {
    if (!options.cache) {
      const at = (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;
      if (current?.at !== at) {
        clear();
        return sidecarScope(await load(at).ctx);
      }
      return sidecarScope(await current.ctx);
    }
    const entry = current ?? load(undefined);
    const scope = await sidecarScope(await entry.ctx);
    if (dnsCheck.size > 0 && current === entry) {
      const services = dnsCheck;
      dnsCheck = new Set();
      if (scope.outboundFollowsEndpoints(services)) clear();
    }
    return scope;
  };

  const remember = <V>(map: Map<string, Promise<V>>, key: string, make: () => Promise<V>): Promise<V> => {
    let p = map.get(key);
    if (p) {
      map.delete(key);
      map.set(key, p);
      return p;
    }
    p = make();
    map.set(key, p);
    p.catch(() => {
      if (map.get(key) === p) map.delete(key);
    });
    while (map.size > max) map.delete(map.keys().next().value as string);
    return p;
  };

  const buildOutbound = async (
    w: SidecarScope,
    b: SidecarBinding,
    scope: SidecarModel | undefined,
  ): Promise<Outbound> => {
    const services = await w.visibleTo(b.proxy.namespace, scope);
    // A Sidecar's own outboundTrafficPolicy replaces the mesh's for the proxies it scopes (istiod).
    const policy = scope?.outboundTrafficPolicy;
    const mesh = policy ? { ...meshFor(w), outboundTrafficPolicy: policy } : meshFor(w);
    const inputs = { proxy: b.proxy, instances: [], services, mesh, security: w.security };
    const listeners = sidecarListeners(inputs).filter((l) => l.name !== VIRTUAL_INBOUND);
    return {
      services,
      resources: await stored([sidecarClusters(inputs), listeners, sidecarRouteConfigurations(inputs)]),
    };
  };

  const buildInbound = (
    out: Outbound,
    b: SidecarBinding,
    instances: ServiceInstance[],
    scope: SidecarModel | undefined,
    security: SecurityPolicies,
    policies: WorkloadAuthorization,
    mesh: SidecarMeshSettings,
  ) => {
    const ingress = scope?.ingress && {
      name: scope.name,
      namespace: scope.namespace,
      listeners: scope.ingress,
    };
    const rbac = authz?.(policies, mesh);
    const inputs: SidecarInputs = {
      proxy: b.proxy,
      instances,
      services: out.services,
      mesh,
      security,
      ...(ingress && { ingress }),
      ...(rbac && { authz: rbac }),
    };
    const listeners: Generated[] = [virtualInboundListener(inputs), ...boundInboundListeners(inputs)].map(
      (message) => ({ name: message.name, schema: ListenerSchema, message }),
    );
    return stored([inboundClusters(inputs, { mesh, proxyIps: b.proxy.ipAddresses }), listeners]);
  };

  const endpointsOnly = ({ changes, refresh }: Push): boolean => {
    if (changes === undefined || refresh) return false;
    let v = edsOnly.get(changes);
    if (v === undefined) {
      v = changes.every(isEds);
      edsOnly.set(changes, v);
    }
    return v;
  };

  return {
    bind(node, namespace) {
      if (!node || node.metadata?.GENERATOR === "grpc") return undefined;
      const parsed = parseSidecarNode(node.id, node.metadata);
      if (!parsed.ok || parsed.proxy.parts.type !== "sidecar") return undefined;
      const proxy = namespace === "" ? parsed.proxy : { ...parsed.proxy, namespace };
      return { proxy, outboundKey: outboundKey(proxy), signature: undefined, epoch: undefined };
    },
    async resources(b, typeUrl) {
      let w: SidecarScope;
      let at: number;
      let readAt: number;
      // A push made everything stale meanwhile: read the context it leaves, a few times at most (under
      // pushes arriving faster than a context is read, answer from the last one read: it is not cached,
      // and the push that made it stale reaches this stream after this answer).
      for (let tries = 0; ; tries++) {
        at = generation;
        readAt = epoch;
        w = await currentScope();
        if (at === generation || tries >= maxWorldRereads) break;
      }
      b.epoch = readAt;
      // A workloadSelector Sidecar its labels match: the class is that Sidecar's, never the labels'.
      const scope = w.scopeOf(b.proxy);
      const key = scope?.workloadSelector
        ? `${b.outboundKey}\n${scope.namespace}/${scope.name}`
        : b.outboundKey;
      // From a context a push made stale meanwhile: answered, never cached.
      const current = at === generation;
      const out = await (current
        ? remember(outbound, key, () => buildOutbound(w, b, scope))
        : buildOutbound(w, b, scope));
      const mine = out.resources.get(typeUrl) ?? [];
      if (typeUrl === TypeUrl.route) return mine;
      const instances = w.instancesOf(b.proxy);
      const sig = instanceSignature(instances);
      b.signature = sig;
      const workload = { namespace: b.proxy.namespace, labels: b.proxy.metadata.labels };
      const policies = w.security.authorizationFor(workload);
      const build = () => buildInbound(out, b, instances, scope, w.security, policies, meshFor(w));
      const inboundSet =
        current && at === generation
          ? remember(
              inbound,
              inboundKey(key, sig, b.proxy, scope, securitySignature(w.security, workload, policies)),
              build,
            )
          : build();
      const own = (await inboundSet).get(typeUrl) ?? [];
      return own.length === 0 ? mine : [...mine, ...own].sort(byName);
    },
    publish(push) {
      const { changes, context } = push;
      // The flush of this push ran here: its context is the one to read (EDS-only: it holds the
      // endpoints the push moved, so the classes stand; else everything built is stale).
      if (context && contextFits(context, push.version, contextOptions)) {
        if (!endpointsOnly(push) || changes?.some((c) => c.version === null || c.service === undefined))
          stale();
        else for (const c of changes ?? []) dnsCheck.add(c.service as string);
        use(undefined, Promise.resolve(context));
        return;
      }
      // Nothing built (a host without sidecars): nothing to keep or drop.
      if (!current && outbound.size === 0 && inbound.size === 0) return;
      if (changes === undefined || !endpointsOnly(push)) return stale();
      if (!current) return;
      const services = new Set<string>();
      for (const c of changes) {
        if (c.version === null || c.service === undefined) return stale();
        services.add(c.service);
      }
      for (const id of services) dnsCheck.add(id);
      use(
        undefined,
        current.ctx.then((prev) =>
          updatePushContext(prev, store, { version: prev.version, full: false, shards: services }),
        ),
      );
    },
    endpointsOnly,
    scope: currentScope,
    staleFor: (b) => b.epoch !== undefined && b.epoch !== epoch,
    async instancesChanged(b) {
      if (b.signature === undefined) return false;
      const w = await currentScope();
      return instanceSignature(w.instancesOf(b.proxy)) !== b.signature;
    },
    get size() {
      return { outbound: outbound.size, inbound: inbound.size };
    },
  };
}

const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Encodes and hashes generated resources once, grouped by type URL, sorted by name (gateway snapshots too). */
export async function stored(groups: readonly (readonly Generated[])[]): Promise<Snapshot> {
  const out = new Map<string, StoredResource[]>();
  for (const group of groups) {
    const made = group.map((g) => toStored(g, ""));
    const list = made.some((m) => m instanceof Promise)
      ? await Promise.all(made)
      : (made as StoredResource[]);
    for (const r of list) {
      const l = out.get(r.typeUrl);
      if (l) l.push(r);
      else out.set(r.typeUrl, [r]);
    }
  }
  for (const l of out.values()) l.sort(byName);
  return out;
}
