/**
 * ClusterLoadAssignments held back until the registry is synced (Istio #24117: istiod serves no
 * xDS until its informers synced). After a restart with an empty store, a Services resync that
 * arrives before the endpoint kind's would publish each service's assignment with no endpoints, and
 * a proxy that held it with endpoints would lose them all: an update that empties a resource, which
 * the sessions' removal gate cannot see. So until the registry is synced, a Kubernetes service
 * whose endpoints were not heard yet (no endpoint shard stored for it, and its cluster's endpoint
 * resync not arrived) generates no assignment at all, neither an empty one nor a removal: a proxy
 * keeps what it holds, a new one waits for the name (EDS is not wildcard). A shard stored and now
 * empty was heard (its endpoints went away): that empty assignment is real and goes out.
 *
 * Which services were held is kept in the store (keys.heldEndpoints()), so a host that restarts
 * before sync loses none; the first turn that finds the registry synced queues one full push of
 * exactly those services (releaseHeldEndpoints), flushed in that turn, before the sync gate opens:
 * a service whose endpoint resync really had none then gets its empty assignment, checked like any
 * other (every EDS name a Cluster refers to exists).
 */
import { configKeyString, pushRequest, serviceConfigKey } from "../model/index.ts";
import { isExternalService } from "../registry/istio/external-services.ts";
import type { ServiceView } from "../resources/types.ts";
import { keys, type Store, update } from "../store/index.ts";
import { enqueuePush } from "./queue.ts";
import type { ServiceRef } from "./scope.ts";

/** Whether the endpoint resync of `cluster` has arrived; given to a flush only before sync. */
export type EndpointsHeard = (cluster: string) => boolean;

/** The record under keys.heldEndpoints(). */
export interface HeldEndpoints {
  /** When a flush first held one of them back (ms): the release push dates from then. */
  since: number;
  /** `[namespace, hostname]`, sorted, unique. */
  services: [string, string][];
  /** Held for pods (keys.heldForPods(), held-pods.ts): the clusters whose Pod resync they wait for, sorted. */
  clusters?: string[];
}

/**
 * Whether `view`'s assignments must be held back before sync: no endpoint shard is stored for the
 * service, and one of its Kubernetes records belongs to a cluster whose endpoint resync has not
 * arrived (ServiceEntry records carry their own endpoints; their WorkloadEntries are not tracked
 * by the sync rule). A service with no record left is being removed: nothing to hold.
 */
export function endpointsUnheard(view: ServiceView, heard: EndpointsHeard): boolean {
  if (view.shards !== undefined) return false;
  return view.services.some((s) => !isExternalService(s) && !heard(s.clusterId));
}

/**
 * Notes a flush before sync: adds the services it held back, drops those it generated
 * assignments for. Writes only when the set changed. The list is keys.heldEndpoints() unless
 * `key` names another (keys.heldForPods(), with the `clusters` whose Pod resync they wait for).
 */
export async function noteHeldEndpoints(
  store: Store,
  held: readonly ServiceRef[],
  generated: readonly ServiceRef[],
  now: number,
  key: string = keys.heldEndpoints(),
  clusters?: readonly string[],
): Promise<void> {
  const id = (r: ServiceRef) => `${r.namespace}\n${r.hostname}`;
  await update<HeldEndpoints>(store, key, (entry) => {
    const before = entry?.value;
    const set = new Map((before?.services ?? []).map(([ns, host]) => [`${ns}\n${host}`, [ns, host]]));
    const size = set.size;
    let changed = false;
    for (const r of generated) changed = set.delete(id(r)) || changed;
    for (const r of held) if (!set.has(id(r))) set.set(id(r), [r.namespace, r.hostname]);
    const waitFor = [...new Set([...(before?.clusters ?? []), ...(held.length > 0 ? (clusters ?? []) : [])])];
    const more = waitFor.length > (before?.clusters?.length ?? 0);
    if (!changed && !more && set.size === size) return undefined;
    if (set.size === 0) return null;
    const services = [...set.keys()].sort().map((k) => set.get(k) as [string, string]);
    return { since: before?.since ?? now, services, ...(waitFor.length > 0 && { clusters: waitFor.sort() }) };
  });
}

/** A service a flush planned, and why its assignments were held (undefined: generated). */
export type HeldFor = [ServiceRef, "endpoints" | "pods" | undefined];

/**
 * Notes a flush's holds in the lists whose rule applied to it: keys.heldEndpoints() when
 * `endpoints` (before sync), keys.heldForPods() when `podsFor` names the clusters whose Pod resync
 * is awaited. Each list gains the services held for its reason and loses those generated.
 */
export async function noteHolds(
  store: Store,
  holds: readonly HeldFor[],
  now: number,
  endpoints: boolean,
  podsFor: readonly string[] | undefined,
): Promise<void> {
  const generated = holds.filter(([, why]) => why === undefined).map(([ref]) => ref);
  const heldFor = (reason: string) => holds.filter(([, why]) => why === reason).map(([ref]) => ref);
  if (endpoints) await noteHeldEndpoints(store, heldFor("endpoints"), generated, now);
  if (podsFor) await noteHeldEndpoints(store, heldFor("pods"), generated, now, keys.heldForPods(), podsFor);
}

/**
 * Once the registry is synced: queues one full push of every service held back (dated from when
 * the first was held, so the turn that runs next flushes it at once) and deletes the record.
 * Returns how many services it queued. A crash between the two queues them twice: harmless.
 * `key`: the list to release (keys.heldForPods() for those held for pods).
 */
export async function releaseHeldEndpoints(
  store: Store,
  key: string = keys.heldEndpoints(),
): Promise<number> {
  const held = (await store.get<HeldEndpoints>(key))?.value;
  if (!held) return 0;
  const configs = held.services.map(([ns, host]) => configKeyString(serviceConfigKey(host, ns)));
  if (configs.length > 0) {
    const request = pushRequest({ full: true, configs, reason: "endpoint", start: held.since });
    await enqueuePush(store, request, held.since);
  }
  await store.delete(key);
  return configs.length;
}
