/** v1 Pod ─▶ PodInfo: what endpoints need of the pod they run in (istio controller/pod.go). */
import { sortedRecord } from "./canonical.ts";
import type { PodInfo } from "./records.ts";
import type { KubePod } from "./types.ts";

/** The service account the API server gives a pod that names none. */
export const DEFAULT_SERVICE_ACCOUNT = "default";

/**
 * A pod as the endpoint join needs it. `ips` are the addresses it serves, primary first
 * (status.podIPs, else status.podIP), none before it has one and none once it has terminated
 * (phase Succeeded or Failed: Istio's pod IP index holds only Pending and Running pods, and
 * the IP may already belong to another pod). The service account falls back to the deprecated
 * spec.serviceAccount, then "default". Labels sorted. Ready when its `Ready` condition is "True"
 * (none, as for a pod not scheduled yet: not ready). Pure.
 */
export function convertPod(obj: KubePod): PodInfo {
  const { namespace, name } = obj.metadata;
  return {
    namespace,
    name,
    ips: podIps(obj),
    labels: sortedRecord(obj.metadata.labels),
    serviceAccount: obj.spec?.serviceAccountName || obj.spec?.serviceAccount || DEFAULT_SERVICE_ACCOUNT,
    nodeName: obj.spec?.nodeName ?? "",
    terminating: Boolean(obj.metadata.deletionTimestamp),
    ready: obj.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
  };
}

function podIps(obj: KubePod): string[] {
  const status = obj.status;
  if (status?.phase === "Succeeded" || status?.phase === "Failed") return [];
  const listed = (status?.podIPs ?? []).map((p) => p.ip);
  const ips = listed.length > 0 ? listed : [status?.podIP ?? ""];
  return [...new Set(ips.filter((ip) => ip !== ""))];
}
