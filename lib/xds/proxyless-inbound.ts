/**
 * The server Listeners of proxyless gRPC workloads (`xds.istio.io/grpc/lds/inbound/<ip>:<port>`,
 * lib/resources/generators/server-listener.ts), derived per proxy on request from the push context
 * the sidecar snapshots hold (lib/xds/sidecar-snapshots.ts scope), as istiod's grpcgen derives them
 * per proxy: its service instance on the port, its PeerAuthentication mode there, its
 * AuthorizationPolicies. Built once per (context, name, service, namespace, labels) and shared by every
 * replica of a workload that binds the same address (`0.0.0.0:<port>`, `[::]:<port>`).
 *
 * Served: a name whose address parses, is a wildcard or one of the proxy's IPs, and whose port is the
 * target port of one of the proxy's service instances. Anything else does not exist (istiod skips a
 * malformed name and a port without an instance; the address check is edgepilot's, so a proxy cannot
 * read another workload's listener). Pushes: a stream holding such names re-derives them on any push
 * but an endpoint-only one that leaves its instances as they were, and re-reads only when they changed.
 */

import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import type { HttpFilter } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { WorkloadAuthorization } from "../registry/istio/security.ts";
import type { EffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import { buildGrpcAuthzFilters } from "../resources/authz/index.ts";
import {
  isWildcardAddress,
  parseServerListenerName,
  SERVER_LISTENER_PREFIX,
  serverListener,
  serverTlsMode,
} from "../resources/generators/server-listener.ts";
import { parseSidecarNode } from "../resources/generators/sidecar/proxy.ts";
import type { SidecarProxy } from "../resources/generators/sidecar/types.ts";
import type { StoredResource } from "../resources/types.ts";
import { toStored } from "../resources/version.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import type { SidecarScope } from "./sidecar-scope.ts";
import type { SidecarSnapshots } from "./sidecar-snapshots.ts";
import type { ResourceSource } from "./source.ts";

/**
 * The one place a server listener's HTTP filters (run before the router) are chosen from the
 * workload's AuthorizationPolicies: grpcgen's RBAC filters (lib/resources/authz/grpc-filters.ts),
 * DENY then ALLOW, matched against identities of the mesh's trust domain and its aliases (istiod's
 * trust-domain aliasing).
 */
export function serverHttpFilters(
  authz: WorkloadAuthorization,
  mesh: Pick<EffectiveMesh, "trustDomain" | "trustDomainAliases">,
): readonly HttpFilter[] {
  return buildGrpcAuthzFilters({
    policies: authz,
    trustDomains: [mesh.trustDomain, ...mesh.trustDomainAliases],
  });
}

/** A proxyless stream's server side: its proxy, the server names it asked for, what it was last served. */
export interface InboundBinding {
  readonly proxy: SidecarProxy;
  /** Server listener names read through this binding (the stream's subscription, as far as it asked). */
  readonly names: Set<string>;
  /** Name ─▶ the version last derived (null: not served), compared on pushes. */
  readonly versions: Map<string, string | null>;
}

/** The server listeners of one host. */
export interface ProxylessInbound {
  /** A binding for a proxyless node (GENERATOR=grpc, an Istio `sidecar~` id), else undefined. */
  bind(node: Pick<Node, "id" | "metadata"> | undefined, namespace: string): InboundBinding | undefined;
  /** The server listeners among `names` that exist for the binding's proxy, sorted by name. */
  resources(binding: InboundBinding, names: readonly string[]): Promise<StoredResource[]>;
  /**
   * After a push: whether what the binding was served changed (its stream then re-reads everything).
   * Derived again from the context the push leaves, so a policy or instance change is seen.
   */
  changed(binding: InboundBinding): boolean | Promise<boolean>;
}

/** Options: the host's sidecar snapshots (their context). */
export interface ProxylessInboundOptions {
  snapshots: Pick<SidecarSnapshots, "scope">;
  /** The most listeners kept built per context (then the cache starts over). Default 1024. */
  maxCached?: number;
}

/** Whether a name is a gRPC server listener's. */
export const isServerListenerName = (name: string): boolean => name.startsWith(SERVER_LISTENER_PREFIX);

/** Creates the server listeners of one host (see the module comment). */
export function createProxylessInbound(options: ProxylessInboundOptions): ProxylessInbound {
  const { snapshots } = options;
  const max = options.maxCached ?? 1024;
  const built = new WeakMap<SidecarScope, Map<string, Promise<StoredResource | undefined>>>();

  const derive = (scope: SidecarScope, proxy: SidecarProxy, name: string) => {
    const address = parseServerListenerName(name);
    if (!address) return undefined;
    if (!isWildcardAddress(address.host) && !proxy.ipAddresses.includes(address.host)) return undefined;
    const instance = scope.instancesOf(proxy).find((i) => i.targetPort === address.port);
    if (!instance) return undefined;
    const workload = { namespace: proxy.namespace, labels: proxy.metadata.labels };
    const service = `${instance.service.namespace}/${instance.service.hostname}`;
    const key = JSON.stringify([name, service, workload.namespace, Object.entries(workload.labels).sort()]);
    let cache = built.get(scope);
    if (!cache || cache.size >= max) {
      cache = new Map();
      built.set(scope, cache);
    }
    let made = cache.get(key);
    if (!made) {
      const httpFilters = serverHttpFilters(scope.security.authorizationFor(workload), scope.mesh);
      const mode = serverTlsMode(scope.security.mtlsForPort(workload, address.port), workload.labels);
      made = Promise.resolve(
        toStored(
          { name, schema: ListenerSchema, message: serverListener({ name, address, mode, httpFilters }) },
          service,
        ),
      );
      cache.set(key, made);
    }
    return made;
  };

  const read = async (binding: InboundBinding, names: Iterable<string>) => {
    const scope = await snapshots.scope();
    const out: StoredResource[] = [];
    for (const name of names) {
      const r = await derive(scope, binding.proxy, name);
      binding.versions.set(name, r?.version ?? null);
      if (r) out.push(r);
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  return {
    bind(node, namespace) {
      if (!node || node.metadata?.GENERATOR !== "grpc") return undefined;
      const parsed = parseSidecarNode(node.id, node.metadata);
      if (!parsed.ok || parsed.proxy.parts.type !== "sidecar") return undefined;
      const proxy = namespace === "" ? parsed.proxy : { ...parsed.proxy, namespace };
      return { proxy, names: new Set(), versions: new Map() };
    },
    resources(binding, names) {
      for (const n of names) binding.names.add(n);
      return read(binding, names);
    },
    changed(binding) {
      if (binding.names.size === 0) return false;
      const before = new Map(binding.versions);
      return read(binding, binding.names).then(() => {
        for (const name of binding.names) if (before.get(name) !== binding.versions.get(name)) return true;
        return false;
      });
    },
  };
}

/** `base` with the binding's server listeners beside it (other names and types read `base`). */
export function inboundSource(
  inbound: ProxylessInbound,
  binding: InboundBinding,
  base: ResourceSource,
): ResourceSource {
  return {
    async get(typeUrl, names) {
      if (typeUrl !== TypeUrl.listener) return base.get(typeUrl, names);
      const own = names.filter(isServerListenerName);
      if (own.length === 0) return base.get(typeUrl, names);
      const shared = names.filter((n) => !isServerListenerName(n));
      const found = [
        ...(shared.length > 0 ? await base.get(typeUrl, shared) : []),
        ...(await inbound.resources(binding, own)),
      ];
      return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    list: (typeUrl) => base.list(typeUrl),
  };
}
