/**
 * The canonical form of RawEndpoint lists: conditions with the API's defaults applied, and one
 * endpoint per (address, port, servicePortName), sorted, so equal pieces serialize to equal JSON.
 */
import { compareStrings } from "./canonical.ts";
import type { RawConditions, RawEndpoint } from "./records.ts";
import type { EndpointConditions, ObjectReference } from "./types.ts";

/**
 * discovery/v1 conditions with the defaults the API documents and Istio applies: a missing
 * `ready` or `serving` is true, a missing `terminating` is false.
 */
export function normalizeConditions(c: EndpointConditions | undefined): RawConditions {
  return {
    ready: c?.ready ?? true,
    serving: c?.serving ?? true,
    terminating: c?.terminating ?? false,
  };
}

/**
 * The pod behind an endpoint: a targetRef of kind Pod with a name, in its own namespace or, when
 * the reference leaves it out, the namespace of the object that holds the endpoint.
 */
export function podRef(
  ref: ObjectReference | undefined,
  namespace: string,
): { namespace: string; name: string } | undefined {
  if (ref?.kind !== "Pod" || !ref.name) return undefined;
  return { namespace: ref.namespace || namespace, name: ref.name };
}

/** Orders by address, then port, then service port name: the endpoint's identity. */
export function compareRawEndpoints(a: RawEndpoint, b: RawEndpoint): number {
  return (
    compareStrings(a.address, b.address) ||
    a.port - b.port ||
    compareStrings(a.servicePortName, b.servicePortName)
  );
}

/**
 * Sorted by compareRawEndpoints with one endpoint per identity. Of duplicates (one address listed
 * twice while it moves between subsets) the readiest wins (ready, then serving, then not
 * terminating), then the one whose content sorts first, so the answer never depends on input
 * order. Does not mutate the input.
 */
export function sortUniqueRawEndpoints(endpoints: readonly RawEndpoint[]): RawEndpoint[] {
  const sorted = [...endpoints].sort(
    (a, b) =>
      compareRawEndpoints(a, b) ||
      readiness(b.conditions) - readiness(a.conditions) ||
      compareStrings(JSON.stringify(a), JSON.stringify(b)),
  );
  for (let i = 1; i < sorted.length; i++) {
    // Duplicates are rare: the sorted copy is the answer unless two neighbours share an identity.
    if (compareRawEndpoints(sorted[i - 1]!, sorted[i]!) === 0)
      return sorted.filter((e, j) => j === 0 || compareRawEndpoints(sorted[j - 1]!, e) !== 0);
  }
  return sorted;
}

function readiness(c: RawConditions): number {
  return (c.ready ? 4 : 0) + (c.serving ? 2 : 0) + (c.terminating ? 0 : 1);
}
