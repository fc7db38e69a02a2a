/**
 * The gateway resources one host serves to `router~` proxies (CDS, LDS, RDS; EDS stays the shared
 * ClusterLoadAssignments), built lazily from the push context the sidecar snapshots read
 * (sidecar-snapshots.ts scope(): one context per push whoever asks) and shared by class, never per
 * proxy when a class will do.
 *
 * Sharing rule. One snapshot per GATEWAY CLASS: the proxy's outbound class (its namespace, which
 * decides exportTo and the services it sees, its DNS domain, CLUSTER_ID, IP family: sidecar-classes.ts
 * outboundKey), the Gateways whose selector its LABELS match (by namespace/name, oldest first, as
 * they are merged), and the port mapping of its own service instances (a Gateway port is the
 * Service port; the listener binds its target port, istiod's resolvePorts). LRU-bounded
 * (maxGatewayClasses).
 *
 * Freshness. A push that changes only ClusterLoadAssignments keeps the snapshots, unless it moved
 * the proxy's own instances (its port mapping) or a service whose clusters follow its endpoints (a
 * DNS one): its stream then re-reads. Any other push (a Gateway or VirtualService change is a Full
 * push: push-refresh.ts announces it even when no shared resource changed) drops them all.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { type GatewayModel, selectsWorkload } from "../registry/istio/gateway.ts";
import { mergeGateways, type PortMapping } from "../registry/istio/gateway-merge.ts";
import type { Push } from "../resources/changes.ts";
import { gatewayClusters } from "../resources/generators/gateway/cluster.ts";
import { gatewayListeners } from "../resources/generators/gateway/listener.ts";
import { gatewayRouteConfigurations } from "../resources/generators/gateway/route.ts";
import type { GatewayInputs } from "../resources/generators/gateway/types.ts";
import { parseSidecarNode } from "../resources/generators/sidecar/proxy.ts";
import {
  defaultSidecarMesh,
  type SidecarMeshSettings,
  type SidecarProxy,
} from "../resources/generators/sidecar/types.ts";
import type { StoredResource } from "../resources/types.ts";
import { outboundKey } from "./sidecar-classes.ts";
import { sidecarMeshOf } from "./sidecar-mesh.ts";
import type { SidecarScope } from "./sidecar-scope.ts";
import { type SidecarSnapshots, stored } from "./sidecar-snapshots.ts";

/** The most gateway classes one host keeps built (an LRU). */
export const maxGatewayClasses = 64;

/** A stream (or one read) served gateway resources. */
export interface GatewayBinding {
  readonly proxy: SidecarProxy;
  /** The port mapping of its last read (undefined before): an EDS push re-checks it. */
  ports: string | undefined;
  /** The snapshots' epoch when it last read (undefined before): a push since that made them stale re-reads all. */
  epoch: number | undefined;
}

/** Options: the host's sidecar snapshots (their context), mesh settings beside Istio's defaults. */
export interface GatewaySnapshotOptions {
  sidecars: SidecarSnapshots;
  mesh?: Partial<SidecarMeshSettings>;
  maxClasses?: number;
  /** Where the lines istiod logs while merging (a server left out) go; once per built class. */
  log?: (line: string) => void;
}

/** The gateway resources of one host. */
export interface GatewaySnapshots {
  /** The binding of a `router~` node whose GENERATOR is not `grpc` in `namespace`, else undefined. */
  bind(node: Pick<Node, "id" | "metadata"> | undefined, namespace: string): GatewayBinding | undefined;
  /** The binding's CDS, LDS or RDS resources, sorted by name. */
  resources(binding: GatewayBinding, typeUrl: string): Promise<readonly StoredResource[]>;
  /** Notes a push (once per push: Views.publish calls it). */
  publish(push: Push): void;
  /** Whether a push made the snapshots stale since the binding's last read. */
  staleFor(binding: GatewayBinding): boolean;
  /** After an EDS-only push: whether the binding's resources may have changed (its ports, a DNS service). */
  changedBy(binding: GatewayBinding, push: Push): Promise<boolean>;
  /** Classes built now (tests). */
  readonly size: number;
}

type Snapshot = ReadonlyMap<string, readonly StoredResource[]>;

/** The proxy's port mapping (its instances' service port ▶ target port), in instance order. */
function portMappings(scope: SidecarScope, proxy: SidecarProxy): PortMapping[] {
  return scope.instancesOf(proxy).map((i) => ({ port: i.servicePort.port, targetPort: i.targetPort }));
}

/** Creates the gateway snapshots of one host (see the module comment). */
export function createGatewaySnapshots(options: GatewaySnapshotOptions): GatewaySnapshots {
  const { sidecars } = options;
  const base: SidecarMeshSettings = { ...defaultSidecarMesh, ...options.mesh };
  const max = options.maxClasses ?? maxGatewayClasses;
  const built = new Map<string, Promise<Snapshot>>();
  const meshes = new WeakMap<SidecarScope, SidecarMeshSettings>();
  const dropped = new WeakSet<Push>();
  let generation = 0;
  let epoch = 0;
  const stale = () => {
    generation++;
    epoch++;
    built.clear();
  };

  const build = async (
    scope: SidecarScope,
    proxy: SidecarProxy,
    selected: GatewayModel[],
    ports: PortMapping[],
  ) => {
    let mesh = meshes.get(scope);
    if (!mesh) {
      mesh = sidecarMeshOf(base, scope.mesh);
      meshes.set(scope, mesh);
    }
    const configs = await scope.gateways();
    const merged = mergeGateways(selected, ports);
    for (const line of merged.skipped) options.log?.(line);
    const inputs: GatewayInputs = {
      proxy,
      merged,
      virtualServices: configs.virtualServices,
      services: await scope.visibleTo(proxy.namespace),
      mesh,
      security: scope.security,
    };
    return stored([gatewayClusters(inputs), gatewayListeners(inputs), gatewayRouteConfigurations(inputs)]);
  };

  return {
    bind(node, namespace) {
      if (!node || node.metadata?.GENERATOR === "grpc") return undefined;
      const parsed = parseSidecarNode(node.id, node.metadata);
      if (!parsed.ok || parsed.proxy.parts.type !== "router") return undefined;
      const proxy = namespace === "" ? parsed.proxy : { ...parsed.proxy, namespace };
      return { proxy, ports: undefined, epoch: undefined };
    },
    async resources(b, typeUrl) {
      const at = generation;
      const readAt = epoch;
      const scope = await sidecars.scope();
      const { gateways } = await scope.gateways();
      const instances = scope
        .instancesOf(b.proxy)
        .map((i) => ({ hostname: i.service.hostname, namespace: i.service.namespace }));
      const selected = gateways.filter((g) => selectsWorkload(g, b.proxy.metadata.labels, instances));
      const ports = portMappings(scope, b.proxy);
      b.ports = JSON.stringify(ports);
      b.epoch = readAt;
      const key = [
        outboundKey(b.proxy),
        selected.map((g) => `${g.namespace}/${g.name}`).join(","),
        b.ports,
      ].join("\n");
      // From a context a push made stale meanwhile: answered, never cached.
      if (at !== generation) return (await build(scope, b.proxy, selected, ports)).get(typeUrl) ?? [];
      let p = built.get(key);
      if (p) {
        built.delete(key);
        built.set(key, p);
      } else {
        p = build(scope, b.proxy, selected, ports);
        const made = p;
        built.set(key, made);
        made.catch(() => {
          if (built.get(key) === made) built.delete(key);
        });
        while (built.size > max) built.delete(built.keys().next().value as string);
      }
      return (await p).get(typeUrl) ?? [];
    },
    publish(push) {
      if (!sidecars.endpointsOnly(push)) stale();
    },
    staleFor: (b) => b.epoch !== undefined && b.epoch !== epoch,
    async changedBy(b, push) {
      if (b.ports === undefined) return false;
      const scope = await sidecars.scope();
      if (JSON.stringify(portMappings(scope, b.proxy)) !== b.ports) return true;
      const services = new Set<string>();
      for (const c of push.changes ?? []) if (c.service !== undefined) services.add(c.service);
      if (services.size === 0 || !scope.outboundFollowsEndpoints(services)) return false;
      // Clusters carrying endpoints inline changed: every class is rebuilt (once per push).
      if (!dropped.has(push)) {
        dropped.add(push);
        stale();
      }
      return true;
    },
    get size() {
      return built.size;
    },
  };
}
