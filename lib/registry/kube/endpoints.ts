/**
 * v1 Endpoints ─▶ raw endpoints, for clusters or controllers that still publish Endpoints
 * (istio pilot/pkg/serviceregistry/kube/controller/endpointcontroller.go buildIstioEndpoints).
 */
import { normalizeConditions, podRef, sortUniqueRawEndpoints } from "./raw-endpoints.ts";
import type { RawConditions, RawEndpoint, SlicePiece } from "./records.ts";
import type { EndpointAddress, EndpointsPort, KubeEndpoints } from "./types.ts";

const READY: RawConditions = normalizeConditions(undefined);
const NOT_READY: RawConditions = { ready: false, serving: false, terminating: false };

/**
 * Every address × every port of every subset: `addresses` ready, `notReadyAddresses` neither ready
 * nor serving (v1 Endpoints cannot say terminating). Node name, hostname and the pod behind a
 * targetRef of kind Pod (in the Endpoints' namespace unless the reference says otherwise) are
 * kept; Endpoints carry no zone. Sorted by (address, port, servicePortName), unique: an address
 * listed both ready and not ready counts as ready.
 */
export function endpointsObjectEndpoints(obj: KubeEndpoints): RawEndpoint[] {
  const namespace = obj.metadata.namespace;
  const out: RawEndpoint[] = [];
  for (const subset of obj.subsets ?? []) {
    const ports = subset.ports ?? [];
    const groups: [EndpointAddress[] | undefined, RawConditions][] = [
      [subset.addresses, READY],
      [subset.notReadyAddresses, NOT_READY],
    ];
    for (const [addresses, conditions] of groups) {
      for (const address of addresses ?? []) {
        if (!address.ip) continue;
        for (const port of ports) out.push(rawEndpoint(address, port, conditions, namespace));
      }
    }
  }
  return sortUniqueRawEndpoints(out);
}

/** What an Endpoints object feeds: the service of the same name, and its endpoints. */
export function endpointsObjectPiece(obj: KubeEndpoints): SlicePiece {
  return { serviceName: obj.metadata.name, endpoints: endpointsObjectEndpoints(obj) };
}

function rawEndpoint(
  address: EndpointAddress,
  port: EndpointsPort,
  conditions: RawConditions,
  namespace: string,
): RawEndpoint {
  const pod = podRef(address.targetRef, namespace);
  return {
    address: address.ip,
    port: port.port,
    servicePortName: port.name ?? "",
    conditions: { ...conditions },
    nodeName: address.nodeName ?? "",
    zone: "",
    zoneHints: [],
    ...(address.hostname && { hostname: address.hostname }),
    ...(pod && { pod }),
  };
}
