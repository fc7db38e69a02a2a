/**
 * The configs gateway proxies are built from, read once per push context on first ask (a process
 * that serves no gateway never reads them): every Istio Gateway and every VirtualService bound to a
 * gateway (its `gateways` name one other than `mesh`), each in istiod's config order (oldest first),
 * one copy per namespace/name whatever cluster sent it. `extra` adds configs that are not stored as
 * Istio ones (the Gateway API translation's Gateways and VirtualServices), read after the stored.
 */
import { byCreation } from "../registry/istio/config-meta.ts";
import { type GatewayModel, toGateway } from "../registry/istio/gateway.ts";
import { type GatewayVirtualService, toGatewayVirtualService } from "../registry/istio/gateway-routes.ts";
import type { StoredConfig } from "../registry/istio/stored.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import type { RoutingMesh } from "./istio-configs.ts";

/** The gateway configs of one push. */
export interface GatewayConfigs {
  /** Every Gateway, oldest first. */
  readonly gateways: readonly GatewayModel[];
  /** Every VirtualService naming a gateway other than `mesh`, oldest first. */
  readonly virtualServices: readonly GatewayVirtualService[];
}

/** Configs read beside the stored ones (the Gateway API translation's); default none. */
export interface GatewayExtras {
  gateways: readonly StoredConfig<"Gateway">[];
  virtualServices: readonly StoredConfig<"VirtualService">[];
}

/** Reads the gateway configs (see the module comment); `mesh` gives the default VirtualService exportTo. */
export async function loadGatewayConfigs(
  store: Store,
  domainSuffix: string,
  mesh: Pick<RoutingMesh, "defaultVirtualServiceExportTo">,
  extras?: GatewayExtras,
): Promise<GatewayConfigs> {
  const more = extras ?? { gateways: [], virtualServices: [] };
  const gatewayConfigs = unique([
    ...(await listAll<StoredConfig<"Gateway">>(store, keys.configPrefix("Gateway"))).map((e) => e.value),
    ...more.gateways,
  ]);
  const vsConfigs = unique([
    ...(await listAll<StoredConfig<"VirtualService">>(store, keys.configPrefix("VirtualService"))).map(
      (e) => e.value,
    ),
    ...more.virtualServices,
  ]);
  const gateways = gatewayConfigs.map((c) => toGateway(meta(c), c.spec, c.gatewayServices)).sort(byCreation);
  const fallback = mesh.defaultVirtualServiceExportTo;
  const virtualServices = vsConfigs
    .filter((c) => boundToGateway(c.spec))
    .map((c) => {
      const written = (c.spec as { exportTo?: string[] }).exportTo ?? [];
      const exportTo = written.length === 0 && !fallback.includes("*") ? fallback : written;
      return toGatewayVirtualService(meta(c), c.spec, domainSuffix, exportTo);
    })
    .sort(byCreation);
  return { gateways, virtualServices };
}

/** Whether a VirtualService names a gateway other than the mesh. */
function boundToGateway(spec: unknown): boolean {
  const g = (spec as { gateways?: unknown } | undefined)?.gateways;
  return Array.isArray(g) && g.some((x) => typeof x === "string" && x !== "mesh");
}

/** The first copy of each namespace/name (keys sort by namespace, name, then cluster). */
function unique<C extends StoredConfig<"Gateway" | "VirtualService">>(configs: readonly C[]): C[] {
  const seen = new Set<string>();
  return configs.filter((c) => {
    const id = `${c.namespace}/${c.name}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function meta(c: StoredConfig<"Gateway" | "VirtualService">) {
  return {
    name: c.name,
    namespace: c.namespace,
    ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
  };
}
