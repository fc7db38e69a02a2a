/**
 * The network table in a flush: loaded before planning (its resolution half, read again only on a
 * push that can change it: one naming MeshNetworks or a system namespace, or everything), and
 * finished after it (gateways of the services the push planned, MeshNetworks' own), stored under
 * keys.networkTable() only when it changed, with one NETWORKS_CHANGED change.
 */
import {
  configKeyString,
  kubeServiceNamespace,
  type PushRequest,
  parseConfigKey,
  type Service,
} from "../model/index.ts";
import type { NamespaceInfo } from "../registry/kube/records.ts";
import { DEFAULT_ISTIO_NAMESPACE } from "../registry/mesh/istio-configmap.ts";
import type { MeshNetworksModel, StoredMeshNetworks } from "../registry/mesh/mesh-networks.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { networkResolution, networkTable } from "../resources/network-build.ts";
import {
  addressGateways,
  gatewayService,
  registryServiceNames,
  serviceGateways,
  sortGateways,
} from "../resources/network-gateways.ts";
import {
  emptyNetworkTable,
  NETWORKS_CHANGED,
  type NetworkTable,
  type ResolvedGateway,
  sameResolution,
} from "../resources/network-table.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { sameJson } from "../same-json.ts";
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";
import type { ServiceRef } from "./scope.ts";

/** The ConfigKey kind of a push that changed the stored MeshNetworks. */
export const MESH_NETWORKS_KIND = "MeshNetworks";

/** The ConfigKey (string form) a system namespace's network change pushes with. */
export function systemNamespaceKey(name: string): string {
  return configKeyString({ kind: "Namespace", namespace: name, name });
}

/** The network table of one flush, between load and finish. */
export interface FlushNetworks {
  /** The table stored before this push (the empty table when none is). */
  before: NetworkTable;
  /** What this push generates with: the new resolution, the gateways of `before`. */
  table: NetworkTable;
  /** Whether the resolution changed: every service's assignments are generated again. */
  resolutionChanged: boolean;
  /** MeshNetworks as this push read it: set on a full push (a Service's change may change its gateways). */
  model?: MeshNetworksModel;
  /** The push names MeshNetworks, a system namespace or everything: every `registryServiceName` gateway is read again. */
  reread: boolean;
}

/** Whether the request names a network input (MeshNetworks, a system namespace) or everything. */
function namesNetworks(request: PushRequest): boolean {
  if (!request.full) return false;
  if (request.configsUpdated === null) return true;
  return request.configsUpdated.some((c) => isNetworkKey(c));
}

function isNetworkKey(c: string): boolean {
  const kind: string = parseConfigKey(c).kind;
  return kind === MESH_NETWORKS_KIND || kind === "Namespace";
}

/** Reads the stored table and, when the push may change it, MeshNetworks and the system namespaces. */
export async function loadNetworks(
  store: Store,
  request: PushRequest,
  systemNamespace: string = DEFAULT_ISTIO_NAMESPACE,
): Promise<FlushNetworks> {
  const before = (await store.get<NetworkTable>(keys.networkTable()))?.value ?? emptyNetworkTable;
  // A Service push may change a gateway that MeshNetworks names: the model is read on every full push.
  const model = request.full ? await readMeshNetworks(store) : undefined;
  if (!namesNetworks(request))
    return { before, table: before, resolutionChanged: false, reread: false, ...(model && { model }) };
  const systems = [];
  for (const e of await listAll<NamespaceInfo>(store, keys.namespaces())) {
    const [, cluster, name] = e.key.split("/");
    if (cluster !== undefined && name !== undefined && decodeSegment(name) === systemNamespace)
      systems.push({ cluster: decodeSegment(cluster), labels: e.value.labels });
  }
  const table = networkTable(networkResolution(model, systems), before.gateways);
  return {
    before,
    table,
    resolutionChanged: !sameResolution(before, table),
    model: model ?? { networks: {} },
    reread: true,
  };
}

async function readMeshNetworks(store: Store): Promise<MeshNetworksModel> {
  return (await store.get<StoredMeshNetworks>(keys.meshNetworks()))?.value.model ?? { networks: {} };
}

/**
 * The request whose services the flush plans: network keys dropped (they name no service). When the
 * resolution changed, every service (every assignment may carry another network): only their
 * assignments when the push names nothing but network inputs, else in full.
 */
export function scopeRequest(request: PushRequest, networks: FlushNetworks): PushRequest {
  const configs = request.configsUpdated;
  const rest = configs?.filter((c) => !isNetworkKey(c));
  if (networks.resolutionChanged)
    return { ...request, configsUpdated: null, ...(rest?.length === 0 && { full: false }) };
  if (configs === null || rest?.length === configs.length) return request;
  return { ...request, configsUpdated: rest ?? null };
}

/**
 * The gateways of the services a push planned, taken chunk by chunk (a flush never holds every
 * plan): each planned hostname, and the gateways its records give under the push's MeshNetworks.
 */
export interface PlannedGateways {
  hosts: Set<string>;
  gateways: ResolvedGateway[];
}

/** Notes one planned service's records (only on a push that read MeshNetworks: records change only in full pushes). */
export function notePlanned(
  into: PlannedGateways,
  networks: FlushNetworks,
  ref: ServiceRef,
  records: readonly Service[],
): void {
  if (!networks.model) return;
  into.hosts.add(ref.hostname);
  for (const g of serviceGateways(records, networks.model)) into.gateways.push(g);
}

/**
 * Finishes the table: MeshNetworks' `address` gateways (from the model this push read), the
 * planned services' gateways, the others' kept (every `registryServiceName` one read again when the
 * push reread MeshNetworks). Stores it and returns the NETWORKS_CHANGED change when it differs from
 * the stored one; undefined otherwise.
 */
export async function finishNetworks(
  store: Store,
  networks: FlushNetworks,
  planned: PlannedGateways,
  domainSuffix: string,
): Promise<ResourceChange | undefined> {
  const { model, before } = networks;
  let gateways = before.gateways;
  if (model) {
    const { hosts } = planned;
    const named = networks.reread ? [...registryServiceNames(model)].filter((h) => !hosts.has(h)) : [];
    const kept = before.gateways.filter((g) => {
      const svc = gatewayService(g);
      // Address gateways come from the model again; a reread drops every registryServiceName one.
      if (svc === undefined || hosts.has(svc)) return false;
      return !(networks.reread && g.source.startsWith(registryPrefix));
    });
    const read = await Promise.all(named.map((h) => readRecords(store, h, domainSuffix)));
    gateways = sortGateways([
      ...addressGateways(model),
      ...kept,
      ...planned.gateways,
      ...read.flatMap((records) => serviceGateways(records, model)),
    ]);
  }
  const table = networkTable(networks.table, gateways);
  if (sameJson(table, before)) return undefined;
  await store.put(keys.networkTable(), table);
  return { typeUrl: TypeUrl.endpoint, name: "", version: null, view: NETWORKS_CHANGED };
}

const registryPrefix = "registryServiceName:";

async function readRecords(store: Store, hostname: string, domainSuffix: string): Promise<Service[]> {
  const namespace = kubeServiceNamespace(hostname, domainSuffix);
  if (namespace === undefined) return [];
  return (await listAll<Service>(store, keys.servicePrefix(namespace, hostname))).map((e) => e.value);
}
