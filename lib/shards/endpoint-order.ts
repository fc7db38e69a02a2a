/**
 * The canonical order of a list of endpoints: sorted and unique by endpointKey. Stored shards
 * and registry output both use it, so equal endpoint sets serialize to equal bytes.
 */
import type { Endpoint, HealthStatus } from "../model/index.ts";
import { endpointEquals } from "../model/index.ts";

/** Orders by address, then port, then service port name: the parts of endpointKey. */
export function compareEndpoints(a: Endpoint, b: Endpoint): number {
  return (
    compareStrings(a.address, b.address) ||
    a.port - b.port ||
    compareStrings(a.servicePortName, b.servicePortName)
  );
}

/**
 * Sorted by compareEndpoints with one endpoint per endpointKey. Of duplicates (the same address
 * seen in two slices while it moves between them) the healthiest wins, then the one whose
 * content sorts first, so the answer never depends on input order. Does not mutate the input.
 */
export function sortUniqueEndpoints(endpoints: readonly Endpoint[]): Endpoint[] {
  // One slice's endpoints come joined in this order already: then the sort would keep them as they are.
  const sorted = inOrder(endpoints, fullOrder) ? [...endpoints] : [...endpoints].sort(fullOrder);
  // Same endpointKey ⇔ same (address, port, servicePortName): neighbours compared, no key built.
  for (let i = 1; i < sorted.length; i++) {
    if (compareEndpoints(sorted[i - 1] as Endpoint, sorted[i] as Endpoint) === 0)
      return sorted.filter((e, j) => j === 0 || compareEndpoints(sorted[j - 1] as Endpoint, e) !== 0);
  }
  return sorted;
}

/** True when two canonical lists (see sortUniqueEndpoints) hold equal endpoints. */
export function endpointListsEqual(a: readonly Endpoint[], b: readonly Endpoint[]): boolean {
  return a.length === b.length && a.every((e, i) => endpointEquals(e, b[i]!));
}

/** compareEndpoints, then the healthiest, then the content: the order sortUniqueEndpoints sorts by. */
function fullOrder(a: Endpoint, b: Endpoint): number {
  return (
    compareEndpoints(a, b) ||
    healthRank[a.health] - healthRank[b.health] ||
    compareStrings(canonical(a), canonical(b))
  );
}

/** Whether `list` is already in `order` (non-decreasing): a stable sort would leave it as it is. */
export function inOrder<T>(list: readonly T[], order: (a: T, b: T) => number): boolean {
  for (let i = 1; i < list.length; i++) if (order(list[i - 1] as T, list[i] as T) > 0) return false;
  return true;
}

const healthRank: Readonly<Record<HealthStatus, number>> = {
  HEALTHY: 0,
  DRAINING: 1,
  TERMINATING: 2,
  UNHEALTHY: 3,
};

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A stable serialization (fixed field order, sorted label keys) used only as a tie-breaker. */
function canonical(e: Endpoint): string {
  const labels = Object.keys(e.labels)
    .sort()
    .map((k) => [k, e.labels[k]]);
  return JSON.stringify([
    e.address,
    e.port,
    e.servicePortName,
    e.health,
    e.serviceAccount,
    e.locality.region,
    e.locality.zone,
    e.locality.subzone,
    labels,
  ]);
}
