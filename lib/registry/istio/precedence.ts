/**
 * Which registry's Service a hostname resolves to when Kubernetes and ServiceEntries both declare
 * it, as Istio's push context indexes services (pilot/pkg/model/push_context.go
 * initServiceRegistry, SortServicesByCreationTime; the aggregate controller lists Kubernetes
 * registries' services merged across clusters). Pure.
 *
 * Services compete per (hostname, namespace): the index is keyed by both, so a ServiceEntry for
 * `reviews.default.svc.cluster.local` declared in namespace `other` does not compete with the
 * Kubernetes Service in `default`. Within one namespace a Kubernetes Service always wins (no
 * "domain squatting" before it is created); otherwise the oldest ServiceEntry wins. Endpoints are
 * not decided here: Istio keys endpoint shards by (hostname, namespace) and provider/cluster, so a
 * ServiceEntry's endpoints join those of the winning Service, as in Istio.
 */
import type { Service } from "../../model/index.ts";
import { compareStrings } from "../kube/canonical.ts";

/** A Service converted from a ServiceEntry, with what Istio orders competing entries by. */
export interface ServiceEntryCandidate {
  service: Service;
  /** The ServiceEntry's metadata.creationTimestamp (RFC 3339); absent or unparsable = unknown, oldest (Go's zero time). */
  creationTimestamp?: string;
  /** The ServiceEntry's name: the final tie-break, so the answer never depends on input order. */
  configName: string;
}

/** The answer for one namespace: the Services that stand for the hostname there, and the ones shadowed. */
export interface HostPrecedence {
  namespace: string;
  provider: "Kubernetes" | "External";
  /** Kubernetes: every cluster's record (the generators combine them). External: the one winning entry. */
  services: Service[];
  /** ServiceEntry Services that lost, in precedence order. */
  shadowed: ServiceEntryCandidate[];
}

/**
 * For one hostname, the winner in each namespace that declares it, sorted by namespace. Inputs
 * with another hostname are a programming error and throw.
 */
export function hostPrecedence(
  kubernetes: readonly Service[],
  serviceEntries: readonly ServiceEntryCandidate[],
): HostPrecedence[] {
  const hostnames = new Set([...kubernetes, ...serviceEntries.map((c) => c.service)].map((s) => s.hostname));
  if (hostnames.size > 1)
    throw new Error(`hostPrecedence takes one hostname, got ${[...hostnames].join(", ")}`);
  const namespaces = new Set([
    ...kubernetes.map((s) => s.namespace),
    ...serviceEntries.map((c) => c.service.namespace),
  ]);
  return [...namespaces].sort(compareStrings).map((namespace) => {
    const kube = kubernetes.filter((s) => s.namespace === namespace);
    const entries = serviceEntries.filter((c) => c.service.namespace === namespace).sort(compareCandidates);
    if (kube.length > 0)
      return { namespace, provider: "Kubernetes", services: [...kube].sort(byCluster), shadowed: entries };
    const [first, ...rest] = entries as [ServiceEntryCandidate, ...ServiceEntryCandidate[]];
    return { namespace, provider: "External", services: [first.service], shadowed: rest };
  });
}

/** Istio's order: older first (unknown = oldest); then the ServiceEntry name, then the cluster. */
export function compareCandidates(a: ServiceEntryCandidate, b: ServiceEntryCandidate): number {
  return (
    creationTime(a) - creationTime(b) ||
    compareStrings(a.configName, b.configName) ||
    compareStrings(a.service.clusterId, b.service.clusterId)
  );
}

function creationTime(c: ServiceEntryCandidate): number {
  const t = c.creationTimestamp ? Date.parse(c.creationTimestamp) : Number.NaN;
  return Number.isNaN(t) ? Number.MIN_SAFE_INTEGER : t;
}

function byCluster(a: Service, b: Service): number {
  return compareStrings(a.clusterId, b.clusterId);
}
