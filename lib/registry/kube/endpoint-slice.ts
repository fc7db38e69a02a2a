import { sortedUnique } from "./canonical.ts";
import { normalizeConditions, noZoneHints, podRef, sortUniqueRawEndpoints } from "./raw-endpoints.ts";
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
  const namespace = obj.metadata.namespace;
  for (const ep of obj.endpoints ?? []) {
    const address = ep.addresses?.[0];
    if (!address || ports.length === 0) continue;
    // What an endpoint's ports share, built once per endpoint (read-only once built, as stored values are).
    const conditions = normalizeConditions(ep.conditions);
    const zoneHints = ep.hints?.forZones?.length
      ? sortedUnique(ep.hints.forZones.map((z) => z.name))
      : noZoneHints;
    const pod = podRef(ep.targetRef, namespace);
    for (const port of ports) out.push(rawSliceEndpoint(ep, address, port, conditions, zoneHints, pod));
  }
  return sortUniqueRawEndpoints(out);
}

/** What a slice feeds: its service (from the service-name label) and its endpoints; undefined without the label. */
export function slicePiece(obj: EndpointSlice): SlicePiece | undefined {
  const serviceName = serviceNameOfSlice(obj);
  return serviceName === undefined ? undefined : { serviceName, endpoints: sliceEndpoints(obj) };
}

/** One raw endpoint, built in one shape (optional fields added after, in the order serialized). */
function rawSliceEndpoint(
  ep: SliceEndpoint,
  address: string,
  port: SliceEndpointPort & { port: number },
  conditions: RawEndpoint["conditions"],
  zoneHints: readonly string[],
  pod: RawEndpoint["pod"],
): RawEndpoint {
  const raw: RawEndpoint = {
    address,
    port: port.port,
    servicePortName: port.name ?? "",
    conditions,
    nodeName: ep.nodeName ?? "",
    zone: ep.zone ?? "",
    zoneHints,
  };
  if (ep.hostname) raw.hostname = ep.hostname;
  if (pod) raw.pod = pod;
  return raw;
}

function hasPortNumber(p: SliceEndpointPort): p is SliceEndpointPort & { port: number } {
  // A port without a number means "unrestricted" to the API; there is no cluster to build for it.
  return typeof p.port === "number";
}
