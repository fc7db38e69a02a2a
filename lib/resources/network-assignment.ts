/**
 * Split-horizon EDS: a shared ClusterLoadAssignment as one network view sees it (istiod
 * pilot/pkg/xds/endpoints/ep_filters.go EndpointsByNetworkFilter, for sidecar and proxyless
 * proxies alike). With no gateway anywhere the assignment is served as it is. Else, per endpoint
 * (its network read from filter_metadata `istio` {network}, "" when absent):
 * - on a network outside the requested view: dropped (an endpoint without a network always stays);
 * - on the proxy's network, or on a network without gateways (directly reachable), or with either
 *   side without a network: kept, its weight scaled; a proxy without a network still reaches an
 *   endpoint of a network that has gateways through them (istiod's forceGateway);
 * - else replaced by its network's gateways of the proxy's IP family (none: dropped), only when it
 *   takes Istio mutual TLS (`envoy.transport_socket_match` tlsMode `istio`: the gateway routes by
 *   SNI), its scaled weight split evenly among them.
 * Weights: every endpoint's (unset: 1) times the gateways' scale factor; each gateway endpoint is
 * appended to the locality of the endpoints it replaces with their summed weight and tlsMode
 * `istio`; locality weights are the sums of their endpoints'. An address already placed in the
 * assignment takes the later one's weight instead of appearing twice (grpc-js-xds and grpc-go
 * refuse an assignment that names one address twice); localities left empty are dropped. Pure.
 */
import { create, fromBinary, type JsonObject } from "@bufbuild/protobuf";
import { AddressSchema, SocketAddressSchema } from "../gen/envoy/config/core/v3/address_pb.ts";
import { MetadataSchema } from "../gen/envoy/config/core/v3/base_pb.ts";
import {
  EndpointSchema,
  type LbEndpoint,
  LbEndpointSchema,
  type LocalityLbEndpoints,
} from "../gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { parseIp } from "../model/ip.ts";
import type { GatewayIndex } from "./gateway-index.ts";
import type { ResolvedGateway } from "./network-table.ts";
import { inNetwork, type NetworkView, visibleIn } from "./network-view.ts";
import type { StoredResource } from "./types.ts";
import { toStored } from "./version.ts";

/** filter_metadata key of Istio's endpoint metadata (`network`, and `cluster` when known). */
export const ISTIO_METADATA = "istio";
/** filter_metadata key whose `tlsMode` says the endpoint takes Istio mutual TLS. */
export const TRANSPORT_SOCKET_MATCH = "envoy.transport_socket_match";

const MAX_UINT32 = 0xffffffff;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The endpoint's network ("" when it has none). */
export function endpointNetwork(e: LbEndpoint): string {
  return str(e.metadata?.filterMetadata[ISTIO_METADATA]?.network) ?? "";
}

/** Whether the endpoint takes Istio mutual TLS (istiod's isMtlsEnabled). */
function mtlsEnabled(e: LbEndpoint): boolean {
  return e.metadata?.filterMetadata[TRANSPORT_SOCKET_MATCH]?.tlsMode === "istio";
}

function host(e: LbEndpoint): string {
  if (e.hostIdentifier.case !== "endpoint") return "";
  const a = e.hostIdentifier.value.address?.address;
  if (a?.case === "socketAddress") return a.value.address;
  return a?.case === "pipe" ? a.value.path : "";
}

function addressKey(e: LbEndpoint): string | undefined {
  if (e.hostIdentifier.case !== "endpoint") return undefined;
  const a = e.hostIdentifier.value.address?.address;
  if (a?.case !== "socketAddress") return undefined;
  const port = a.value.portSpecifier.case === "portValue" ? a.value.portSpecifier.value : 0;
  return `${a.value.address}|${port}`;
}

/** istiod's scaleEndpointLBWeight: unset or 0 is 1, times the factor, clipped to uint32. */
export function scaledWeight(weight: number | undefined, scaleFactor: number): number {
  if (weight === undefined || weight === 0) return Math.min(scaleFactor, MAX_UINT32);
  return Math.min(weight * scaleFactor, MAX_UINT32);
}

/** The gateways of `gateways` the proxy's IP family reaches (istiod's filterGatewaysByIPFamily). */
export function reachableGateways(
  gateways: readonly ResolvedGateway[],
  family: NetworkView["family"],
): readonly ResolvedGateway[] {
  if (family === "") return gateways;
  return gateways.filter((g) => {
    const p = parseIp(g.address);
    return p.ok && p.family === family;
  });
}

/** The endpoint that stands for a gateway: its address, the weight behind it, tlsMode `istio`. */
function gatewayEndpoint(gw: ResolvedGateway, weight: number): LbEndpoint {
  const socket = create(SocketAddressSchema, {
    address: gw.address,
    portSpecifier: { case: "portValue", value: gw.port },
  });
  const metadata: Record<string, JsonObject> = { [TRANSPORT_SOCKET_MATCH]: { tlsMode: "istio" } };
  if (gw.network !== "") metadata[ISTIO_METADATA] = { network: gw.network };
  return create(LbEndpointSchema, {
    hostIdentifier: {
      case: "endpoint",
      value: create(EndpointSchema, {
        address: create(AddressSchema, { address: { case: "socketAddress", value: socket } }),
      }),
    },
    loadBalancingWeight: weight,
    metadata: create(MetadataSchema, { filterMetadata: metadata }),
  });
}

/**
 * `cla` as `view` sees it through `gateways` (see the module comment); undefined when it is the
 * same assignment (no gateway anywhere, or nothing to drop, replace or reweigh).
 */
export function viewAssignment(
  cla: ClusterLoadAssignment,
  view: NetworkView,
  gateways: GatewayIndex,
): ClusterLoadAssignment | undefined {
  if (!gateways.multiNetwork) return undefined;
  const scale = gateways.scaleFactor;
  let changed = false;
  const placed = new Map<string, LbEndpoint>();
  const out: LocalityLbEndpoints[] = [];
  // Adds `e` to `list` unless its address is placed already: that one takes its weight.
  const place = (list: LbEndpoint[], e: LbEndpoint) => {
    const key = addressKey(e);
    const first = key === undefined ? undefined : placed.get(key);
    if (first === undefined) {
      if (key !== undefined) placed.set(key, e);
      list.push(e);
      return;
    }
    changed = true;
    first.loadBalancingWeight = Math.min(
      (first.loadBalancingWeight ?? 0) + (e.loadBalancingWeight ?? 0),
      MAX_UINT32,
    );
  };
  for (const locality of cla.endpoints) {
    const kept: LbEndpoint[] = [];
    const behind = new Map<string, { gw: ResolvedGateway; weight: number }>();
    for (const e of locality.lbEndpoints) {
      const network = endpointNetwork(e);
      if (!visibleIn(view, network)) {
        changed = true;
        continue;
      }
      const cluster = str(e.metadata?.filterMetadata[ISTIO_METADATA]?.cluster);
      const gws = network === "" ? [] : gateways.forEndpoint(network, cluster);
      const weight = scaledWeight(e.loadBalancingWeight, scale);
      const force = view.network === "" && network !== "" && gws.length > 0;
      if (!force && (inNetwork(view, network) || gws.length === 0)) {
        if (host(e) === "") {
          changed = true;
          continue;
        }
        if (weight !== e.loadBalancingWeight) changed = true;
        // A copy: `place` may add to its weight, and the shared message is never written.
        place(kept, { ...e, loadBalancingWeight: weight });
        continue;
      }
      changed = true;
      const reachable = reachableGateways(gws, view.family);
      if (reachable.length === 0 || !mtlsEnabled(e)) continue;
      const share = Math.floor(weight / reachable.length);
      for (const gw of reachable) {
        const id = JSON.stringify([gw.network, gw.cluster, gw.address, gw.port]);
        const held = behind.get(id);
        if (held) held.weight = Math.min(held.weight + share, MAX_UINT32);
        else behind.set(id, { gw, weight: share });
      }
    }
    const sorted = [...behind.values()].sort((a, b) =>
      a.gw.address < b.gw.address ? -1 : a.gw.address > b.gw.address ? 1 : a.gw.port - b.gw.port,
    );
    for (const { gw, weight } of sorted) place(kept, gatewayEndpoint(gw, weight === 0 ? 1 : weight));
    out.push({ ...locality, lbEndpoints: kept });
  }
  const localities: LocalityLbEndpoints[] = [];
  for (const l of out) {
    if (l.lbEndpoints.length === 0) {
      changed = true;
      continue;
    }
    let sum = 0;
    for (const e of l.lbEndpoints) sum = Math.min(sum + (e.loadBalancingWeight ?? 0), MAX_UINT32);
    if (sum !== l.loadBalancingWeight) changed = true;
    localities.push({ ...l, loadBalancingWeight: sum });
  }
  return changed ? { ...cla, endpoints: localities } : undefined;
}

/**
 * The published assignment `shared` as `view` sees it: `shared` itself when unchanged, else the
 * derived one, encoded and versioned like every resource (its content hash), so one mesh gives
 * one version per view on every host.
 */
export function viewResource(
  shared: StoredResource,
  view: NetworkView,
  gateways: GatewayIndex,
): StoredResource | Promise<StoredResource> {
  if (!gateways.multiNetwork) return shared;
  const cla = fromBinary(ClusterLoadAssignmentSchema, shared.body);
  const seen = viewAssignment(cla, view, gateways);
  if (seen === undefined) return shared;
  return toStored({ name: shared.name, schema: ClusterLoadAssignmentSchema, message: seen }, shared.service);
}
