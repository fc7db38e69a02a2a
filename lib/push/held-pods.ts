/**
 * ClusterLoadAssignments held back while endpoints wait for their pod (istiod's controller counts
 * as synced only once its pod informer has, so it never builds endpoints without their pods). An
 * EndpointSlice endpoint whose targetRef names a pod not stored is left out of the shard and served
 * when the pod arrives (lib/registry/kube/endpoint-builder.ts "wait-for-pod"). After a restart the
 * relay lists every kind at once and the Pod list, usually the largest, often comes last: the
 * Services and endpoint resyncs make the registry synced (removals allowed) while the pods are
 * missing, and an assignment published then is short or empty: a proxy holding those endpoints
 * loses them until the Pod resync comes.
 *
 * So while a cluster heard from has sent no Pod resync and PILOT_SYNC_TIMEOUT has not passed since
 * the sync record began, a service with an endpoint in that cluster that the join would serve but
 * for its missing pod gets no new assignment (the proxy keeps what it holds; the generated record
 * keeps the last). The services held are listed under keys.heldForPods() with the clusters they
 * wait for; the first turn that finds one of those clusters' Pod resync arrived (or the timeout
 * passed) regenerates them all once (releaseHeldEndpoints), and the flush holds again those still
 * waiting for another cluster. While the list is not empty no turn opens the sync gate (mesh-core).
 * After the Pod resync nothing is held: a new endpoint whose pod comes later is simply not served yet.
 */
import type { Service } from "../model/index.ts";
import { isExternalService } from "../registry/istio/external-services.ts";
import { rawEndpointHealth, unservedReason } from "../registry/kube/endpoint-builder.ts";
import type { SlicePiece } from "../registry/kube/records.ts";
import type { SyncState } from "../resources/sync-gate.ts";
import type { ServiceView } from "../resources/types.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/** Given to a flush only while some cluster's Pod resync is awaited (and the timeout has not passed). */
export interface PodsPending {
  /** The clusters heard from whose Pod resync has not arrived, sorted. */
  clusters: readonly string[];
  /** PILOT_SEND_UNHEALTHY_ENDPOINTS: which endpoints the join would serve. */
  sendUnhealthy: boolean;
}

/** The clusters whose Pod resync is awaited at `state`, or undefined when nothing is to be held. */
export function podsPendingIn(
  state: Pick<SyncState, "timedOut" | "clusters">,
  sendUnhealthy: boolean,
): PodsPending | undefined {
  if (state.timedOut) return undefined;
  const clusters = state.clusters.filter((c) => !c.pods).map((c) => c.cluster);
  return clusters.length > 0 ? { clusters, sendUnhealthy } : undefined;
}

/**
 * Whether `view` has, in a cluster of `pending`, an endpoint the join leaves waiting for its pod:
 * a stored slice endpoint that names a pod not stored and that would be served otherwise (the
 * same rule as buildEndpoint, decided before the pod lookup). Reads the service's slice pieces in
 * those clusters (one list each) and their pods (one getMany): only while pods are pending.
 */
export async function podsAwaited(store: Store, view: ServiceView, pending: PodsPending): Promise<boolean> {
  const podKeys: string[] = [];
  for (const service of view.services) {
    if (isExternalService(service) || !pending.clusters.includes(service.clusterId)) continue;
    const cluster = service.clusterId;
    const pieces = await listAll<SlicePiece>(store, keys.slicePrefix(view.namespace, view.hostname, cluster));
    for (const { value } of pieces) {
      for (const raw of value.endpoints) {
        if (raw.pod && served(raw.conditions, service, pending.sendUnhealthy))
          podKeys.push(keys.pod(cluster, raw.pod.namespace, raw.pod.name));
      }
    }
  }
  if (podKeys.length === 0) return false;
  const found = await store.getMany<unknown>(podKeys);
  return podKeys.some((k) => !found.has(k));
}

function served(
  conditions: SlicePiece["endpoints"][number]["conditions"],
  service: Service,
  sendUnhealthy: boolean,
) {
  return unservedReason(rawEndpointHealth(conditions, service), service, sendUnhealthy) === undefined;
}
