/**
 * Pods as a ServiceEntry's workloadSelector sees them (Istio's serviceentry controller takes the
 * Kubernetes registry's WorkloadInstances): a Pod with an IP that is not terminating is a workload
 * at its first IP, with its labels, service account and its Node's locality, shaped as a
 * WorkloadEntry so the same selection and endpoint conversion apply. Readiness as the Kubernetes
 * path treats an endpoint (endpoint-builder.ts unservedReason): a ready Pod is HEALTHY; a Pod not
 * ready is no workload, or an UNHEALTHY one with PILOT_SEND_UNHEALTHY_ENDPOINTS; terminating never.
 */

import type { WorkloadEntryConfig } from "../../registry/istio/workload-entry.ts";
import type { NodeInfo, PodInfo } from "../../registry/kube/records.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext } from "../context.ts";

/** The workload name of a Pod: `pod:<name>`, never a WorkloadEntry's (a DNS name holds no ":"). */
export function podWorkloadName(pod: Pick<PodInfo, "name">): string {
  return `pod:${pod.name}`;
}

/**
 * A Pod as a workload, or undefined when it cannot serve (no IP yet, terminating, or not ready
 * without PILOT_SEND_UNHEALTHY_ENDPOINTS). `nodes` caches Node lookups for one call.
 */
export async function podWorkload(
  ctx: IngestContext,
  pod: PodInfo,
  nodes: Map<string, Promise<NodeInfo | undefined>> = new Map(),
): Promise<WorkloadEntryConfig | undefined> {
  const address = pod.ips[0] ?? "";
  if (address === "" || pod.terminating) return undefined;
  const unhealthy = pod.ready === false;
  if (unhealthy && !ctx.registry.sendUnhealthy) return undefined;
  let node = nodes.get(pod.nodeName);
  if (!node) {
    node =
      pod.nodeName === ""
        ? Promise.resolve(undefined)
        : ctx.store.get<NodeInfo>(keys.node(ctx.cluster, pod.nodeName)).then((e) => e?.value);
    nodes.set(pod.nodeName, node);
  }
  const n = await node;
  const locality = n && n.region !== "" ? [n.region, n.zone, n.subzone].join("/") : "";
  return {
    kind: "WorkloadEntry",
    name: podWorkloadName(pod),
    namespace: pod.namespace,
    clusterId: ctx.cluster,
    resourceVersion: "",
    labels: pod.labels,
    ...(unhealthy && { unhealthy: true as const }),
    spec: {
      address,
      ...(pod.serviceAccount !== "" && { serviceAccount: pod.serviceAccount }),
      ...(locality !== "" && { locality }),
    },
  };
}

/** Every Pod of the namespace (call's cluster) that can serve, as workloads, in key order. */
export async function namespacePodWorkloads(
  ctx: IngestContext,
  namespace: string,
): Promise<WorkloadEntryConfig[]> {
  const nodes = new Map<string, Promise<NodeInfo | undefined>>();
  const out: WorkloadEntryConfig[] = [];
  for (const e of await listAll<PodInfo>(ctx.store, keys.podsIn(ctx.cluster, namespace))) {
    const w = await podWorkload(ctx, e.value, nodes);
    if (w) out.push(w);
  }
  return out;
}
