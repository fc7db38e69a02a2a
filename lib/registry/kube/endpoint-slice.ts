import { sortedUnique } from "./canonical.ts";
import { normalizeConditions, podRef, sortUniqueRawEndpoints } from "./raw-endpoints.ts";
import type { RawEndpoint, SlicePiece } from "./records.ts";
import { serviceNameOfSlice } from "./service.ts";
import type { EndpointSlice, SliceEndpoint, SliceEndpointPort } from "./types.ts";

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
    zoneHints: ep.hints?.forZones?.length ? sortedUnique(ep.hints.forZones.map((z) => z.name)) : [],
    ...(ep.hostname && { hostname: ep.hostname }),
    ...(pod && { pod }),
  };
}

function hasPortNumber(p: SliceEndpointPort): p is SliceEndpointPort & { port: number } {
  // A port without a number means "unrestricted" to the API; there is no cluster to build for it.
  return typeof p.port === "number";
}
