/**
 * The canonical form of RawEndpoint lists: conditions with the API's defaults applied, and one
 * endpoint per (address, port, servicePortName), sorted, so equal pieces serialize to equal JSON.
 */
import { compareStrings } from "./canonical.ts";
import type { RawConditions, RawEndpoint } from "./records.ts";
import type { EndpointConditions, ObjectReference } from "./types.ts";

/**
 * discovery/v1 conditions with the defaults the API documents and Istio applies: a missing
 * `ready` or `serving` is true, a missing `terminating` is false. One shared, frozen object per
 * combination (eight in all), so the many endpoints a store keeps hold no copy each; read-only,
 * as stored values are (lib/store/store.ts).
 */
export function normalizeConditions(c: EndpointConditions | undefined): RawConditions {
  const ready = c?.ready ?? true;
  const serving = c?.serving ?? true;
  const terminating = c?.terminating ?? false;
  return sharedConditions[(ready ? 4 : 0) + (serving ? 2 : 0) + (terminating ? 1 : 0)] as RawConditions;
}

/** Every combination of conditions, indexed by ready·4 + serving·2 + terminating. */
const sharedConditions: readonly RawConditions[] = Array.from({ length: 8 }, (_, i) =>
  Object.freeze({ ready: (i & 4) !== 0, serving: (i & 2) !== 0, terminating: (i & 1) !== 0 }),
);

/** The zone hints of an endpoint with none: one shared, frozen list (read-only, as stored values are). */
export const noZoneHints: readonly string[] = Object.freeze([]);

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
