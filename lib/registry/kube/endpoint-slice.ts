/**
 * discovery.k8s.io/v1 EndpointSlice ─▶ raw endpoints, joined later with pods and nodes
 * (istio pilot/pkg/serviceregistry/kube/controller/endpointslice.go updateEndpointCacheForSlice).
 */
import type { Endpoint, HealthStatus } from "../../model/index.ts";
import { sortUniqueEndpoints } from "../../shards/endpoint-order.ts";
import { sortedUnique } from "./canonical.ts";
import { normalizeConditions, podRef, sortUniqueRawEndpoints } from "./raw-endpoints.ts";
import type { RawEndpoint, SlicePiece } from "./records.ts";
import { serviceNameOfSlice } from "./service.ts";
import type { EndpointConditions, EndpointSlice, SliceEndpoint, SliceEndpointPort } from "./types.ts";

/**
 * Every endpoint × every numbered port of an IPv4 or IPv6 slice, at the endpoint's first address
 * (the API says a slice endpoint's addresses are fungible), conditions normalized, sorted by
 * (address, port, servicePortName) and unique. FQDN slices, endpoints without an address and
 * ports without a number give nothing. No health filtering: the join (buildEndpoint) decides.
 */
export function sliceEndpoints(obj: EndpointSlice): RawEndpoint[] {
  if (obj.addressType !== "IPv4" && obj.addressType !== "IPv6") return [];
  const ports = (obj.ports ?? []).filter(hasPortNumber);
  const out: RawEndpoint[] = [];
  for (const ep of obj.endpoints ?? []) {
    const address = ep.addresses?.[0];
    if (!address) continue;
    for (const port of ports) out.push(rawSliceEndpoint(obj, ep, address, port));
  }
  return sortUniqueRawEndpoints(out);
}

/** What a slice feeds: its service (from the service-name label) and its endpoints; undefined without the label. */
export function slicePiece(obj: EndpointSlice): SlicePiece | undefined {
  const serviceName = serviceNameOfSlice(obj);
  return serviceName === undefined ? undefined : { serviceName, endpoints: sliceEndpoints(obj) };
}

function rawSliceEndpoint(
  slice: EndpointSlice,
  ep: SliceEndpoint,
  address: string,
  port: SliceEndpointPort & { port: number },
): RawEndpoint {
  const pod = podRef(ep.targetRef, slice.metadata.namespace);
  return {
    address,
    port: port.port,
    servicePortName: port.name ?? "",
    conditions: normalizeConditions(ep.conditions),
    nodeName: ep.nodeName ?? "",
    zone: ep.zone ?? "",
    zoneHints: sortedUnique((ep.hints?.forZones ?? []).map((z) => z.name)),
    ...(ep.hostname && { hostname: ep.hostname }),
    ...(pod && { pod }),
  };
}

/** Where the slice came from. */
export interface EndpointSliceConversionOptions {
  /** The cluster (shard) that reported the slice; networks and node localities hang off it later. */
  clusterId: string;
}

/**
 * Superseded by sliceEndpoints + buildEndpoint; kept until ingest has switched over.
 * The endpoints one slice contributes to its service's shard: one per ready endpoint × slice
 * port, at the endpoint's first address (the API says addresses are fungible), sorted and
 * unique by endpointKey. FQDN slices, endpoints without addresses and ports without a number
 * contribute nothing. Pure: the same slice gives the same list.
 */
export function convertEndpointSlice(
  obj: EndpointSlice,
  _options: EndpointSliceConversionOptions,
): Endpoint[] {
  if (obj.addressType !== "IPv4" && obj.addressType !== "IPv6") return [];
  const ports = (obj.ports ?? []).filter(hasPortNumber);
  const out: Endpoint[] = [];
  for (const ep of obj.endpoints ?? []) {
    const address = ep.addresses[0];
    if (address === undefined || address === "") continue;
    const health = endpointHealth(ep.conditions);
    if (!includedInShard(health)) continue;
    for (const port of ports) out.push(buildEndpoint(ep, address, port, health));
  }
  return sortUniqueEndpoints(out);
}

/**
 * The health of a slice endpoint. `ready` missing means ready (the API's rule), so only an
 * explicit `ready: false` is UNHEALTHY. Serving-while-terminating (DRAINING / TERMINATING) is
 * not distinguished yet: such an endpoint is not ready, hence UNHEALTHY.
 */
export function endpointHealth(conditions: EndpointConditions | undefined): HealthStatus {
  return conditions?.ready === false ? "UNHEALTHY" : "HEALTHY";
}

/**
 * Whether an endpoint of this health goes into the shard. Only healthy endpoints do for now;
 * PILOT_SEND_UNHEALTHY_ENDPOINTS and draining endpoints will widen this.
 */
export function includedInShard(health: HealthStatus): boolean {
  return health === "HEALTHY";
}

function hasPortNumber(p: SliceEndpointPort): p is SliceEndpointPort & { port: number } {
  // A port without a number means "unrestricted" to the API; there is no cluster to build for it.
  return typeof p.port === "number";
}

function buildEndpoint(
  ep: SliceEndpoint,
  address: string,
  port: SliceEndpointPort & { port: number },
  health: HealthStatus,
): Endpoint {
  return {
    address,
    port: port.port,
    servicePortName: port.name ?? "",
    labels: {},
    locality: { region: "", zone: ep.zone ?? "", subzone: "" },
    serviceAccount: "",
    health,
  };
}
