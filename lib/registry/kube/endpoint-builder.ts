/**
 * The join: a raw endpoint with the service, pod and node it belongs to ─▶ a model Endpoint, or the
 * reason it is not served (istio controller/endpointslice.go endpointHealthStatus and getPod,
 * controller/endpoint_builder.go NewEndpointBuilder, util/label AugmentLabels, and the filter in
 * pilot/pkg/xds/endpoints/endpoint_builder.go that decides which endpoints reach a proxy).
 */
import type { Endpoint, HealthStatus, Locality, Service } from "../../model/index.ts";
import { sortedRecord } from "./canonical.ts";
import { podLocality, TOPOLOGY_REGION_LABEL, TOPOLOGY_SUBZONE_LABEL, TOPOLOGY_ZONE_LABEL } from "./node.ts";
import type { NodeInfo, PodInfo, RawConditions, RawEndpoint } from "./records.ts";

/** Service label that turns on cookie-based persistent sessions (PILOT_PERSISTENT_SESSION_LABEL default). */
export const PERSISTENT_SESSION_LABEL = "istio.io/persistent-session";
/** Pod label that marks an endpoint draining whatever its conditions (PILOT_DRAINING_LABEL default). */
export const DRAINING_LABEL = "istio.io/draining";
/** Endpoint label naming the cluster the endpoint runs in (added by Istio's AugmentLabels). */
export const CLUSTER_LABEL = "topology.istio.io/cluster";
/**
 * Pod, namespace, Service and WorkloadEntry label naming a network (Istio label.TopologyNetwork):
 * on a pod or its namespace, the network of the pod's endpoints.
 */
export const NETWORK_LABEL = "topology.istio.io/network";
/** Endpoint label naming the pod's node (added by Istio's AugmentLabels). */
export const NODE_HOSTNAME_LABEL = "kubernetes.io/hostname";

/** What buildEndpoint joins a raw endpoint with. */
export interface EndpointBuildContext {
  /** This cluster's record of the service; absent when the Service has not arrived (yet). */
  service?: Service;
  /** The pod behind the endpoint: the one raw.pod names, or the one found by the endpoint's IP. */
  pod?: PodInfo;
  /** The node the pod (else the endpoint) runs on. */
  node?: NodeInfo;
  clusterId: string;
  trustDomain: string;
  /** PILOT_SEND_UNHEALTHY_ENDPOINTS. */
  sendUnhealthy: boolean;
  /** The NETWORK_LABEL of the endpoints' namespace; absent or "" when it has none. */
  namespaceNetwork?: string;
  /**
   * Where endpoints built in one go share their locality and labels objects (by pod, node and
   * zone: what the two depend on), instead of building equal ones per endpoint. The endpoints
   * built are then read-only, as stored values are (lib/store/store.ts).
   */
  shared?: Map<string, { locality: Locality; labels: Record<string, string> }>;
  /**
   * With `shared`: the pair the last endpoint took and what it depended on (pod and node by
   * identity, zone), so a run of endpoints of one pod, node and zone builds no key to look up.
   */
  lastShared?: SharedPair;
}

/** One shared locality and labels pair, with the pod, node and zone it was built for. */
interface SharedPair {
  pod: PodInfo | undefined;
  node: NodeInfo | undefined;
  zone: string;
  built: { locality: Locality; labels: Record<string, string> };
}

/** A built endpoint; or wait: the slice names a pod not seen yet; or skip, with the reason. */
export type EndpointBuildResult =
  | { kind: "endpoint"; endpoint: Endpoint }
  | { kind: "wait-for-pod" }
  | { kind: "skip"; reason: string };

/**
 * The health of an endpoint from its conditions: the service's publishNotReadyAddresses ▶ HEALTHY;
 * ready ▶ HEALTHY; not ready but serving and terminating ▶ DRAINING; terminating ▶ TERMINATING;
 * otherwise UNHEALTHY.
 */
export function rawEndpointHealth(
  conditions: RawConditions,
  service?: Pick<Service, "publishNotReadyAddresses">,
): HealthStatus {
  if (service?.publishNotReadyAddresses || conditions.ready) return "HEALTHY";
  if (conditions.terminating) return conditions.serving ? "DRAINING" : "TERMINATING";
  return "UNHEALTHY";
}

/**
 * Why Istio would not send an endpoint of this health to proxies, or undefined when it would:
 * HEALTHY always goes; UNHEALTHY only with PILOT_SEND_UNHEALTHY_ENDPOINTS or when the service sets
 * a traffic distribution (Service.SupportsUnhealthyEndpoints); TERMINATING never; DRAINING only to
 * services with the persistent-session label.
 */
export function unservedReason(
  health: HealthStatus,
  service: Service | undefined,
  sendUnhealthy: boolean,
): string | undefined {
  switch (health) {
    case "HEALTHY":
      return undefined;
    case "UNHEALTHY":
      return sendUnhealthy || service?.trafficDistribution !== undefined
        ? undefined
        : "not ready: unhealthy endpoints are sent only with PILOT_SEND_UNHEALTHY_ENDPOINTS or a traffic distribution";
    case "TERMINATING":
      return "terminating: never sent, even with PILOT_SEND_UNHEALTHY_ENDPOINTS";
    case "DRAINING":
      return persistentSession(service)
        ? undefined
        : `draining: sent only to services labelled ${PERSISTENT_SESSION_LABEL}`;
  }
}

/**
 * Joins a raw endpoint with its service, pod and node. Skips what Istio would not send (see
 * unservedReason); waits when raw.pod names a pod that ctx.pod is not (served when it arrives);
 * without a pod reference builds without pod information. Labels: the pod's, augmented as Istio
 * does with the locality's region/zone/subzone, the cluster and the pod's node, sorted. Service
 * account `spiffe://<trust domain>/ns/<pod ns>/sa/<pod sa>` when the pod is known, else "".
 * Locality: the pod's locality label, else the node's, else the slice's zone. Network: the pod's
 * NETWORK_LABEL, else its namespace's (what Istio's injector copies onto the pod), else none
 * (the cluster and MeshNetworks fallbacks are resolved at generation). Pure.
 */
export function buildEndpoint(raw: RawEndpoint, ctx: EndpointBuildContext): EndpointBuildResult {
  let health = rawEndpointHealth(raw.conditions, ctx.service);
  const reason = unservedReason(health, ctx.service, ctx.sendUnhealthy);
  // Decided before the pod lookup: a terminating endpoint's pod may be gone for good.
  if (reason !== undefined) return { kind: "skip", reason };

  const pod = raw.pod ? (samePod(ctx.pod, raw.pod) ? ctx.pod : undefined) : ctx.pod;
  if (raw.pod && !pod) return { kind: "wait-for-pod" };

  if (pod?.labels[DRAINING_LABEL]) {
    if (!persistentSession(ctx.service)) {
      return {
        kind: "skip",
        reason: `pod labelled ${DRAINING_LABEL}: sent only to persistent-session services`,
      };
    }
    health = "DRAINING";
  }

  const { locality, labels } = localityAndLabels(raw, pod, ctx);
  const network = pod?.labels[NETWORK_LABEL] || ctx.namespaceNetwork || "";
  return {
    kind: "endpoint",
    endpoint: {
      address: raw.address,
      port: raw.port,
      servicePortName: raw.servicePortName,
      labels,
      locality,
      serviceAccount: pod ? spiffeId(ctx.trustDomain, pod.namespace, pod.serviceAccount) : "",
      health,
      ...(network !== "" && { network }),
    },
  };
}

/** An endpoint's locality and augmented labels, taken from ctx.shared when an equal pair was built. */
function localityAndLabels(
  raw: RawEndpoint,
  pod: PodInfo | undefined,
  ctx: EndpointBuildContext,
): { locality: Locality; labels: Record<string, string> } {
  const last = ctx.lastShared;
  if (last && last.pod === pod && last.node === ctx.node && last.zone === raw.zone) return last.built;
  const key =
    ctx.shared && `${pod ? `${pod.namespace}/${pod.name}` : ""}\n${ctx.node?.name ?? ""}\n${raw.zone}`;
  let built = key === undefined ? undefined : ctx.shared?.get(key);
  if (!built) {
    const locality = endpointLocality(raw, pod, ctx.node);
    built = {
      locality,
      labels: augmentLabels(pod?.labels ?? {}, locality, ctx.clusterId, pod?.nodeName ?? ""),
    };
    if (key !== undefined) ctx.shared?.set(key, built);
  }
  if (key !== undefined) ctx.lastShared = { pod, node: ctx.node, zone: raw.zone, built };
  return built;
}

/** The SPIFFE identity of a Kubernetes service account (Istio spiffe.MustGenSpiffeURI). */
export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/**
 * Where an endpoint runs: the pod's locality label wins; else the node's labels (when any is
 * set); else only the zone the slice reports.
 */
export function endpointLocality(
  raw: RawEndpoint,
  pod: PodInfo | undefined,
  node: NodeInfo | undefined,
): Locality {
  const pinned = pod ? podLocality(pod.labels) : undefined;
  if (pinned) return pinned;
  if (node && (node.region || node.zone || node.subzone)) {
    return { region: node.region, zone: node.zone, subzone: node.subzone };
  }
  return { region: "", zone: raw.zone, subzone: "" };
}

/**
 * Istio's AugmentLabels: the pod's labels plus topology.kubernetes.io/region and /zone and
 * topology.istio.io/subzone from the locality, topology.istio.io/cluster and kubernetes.io/hostname
 * (the pod's node), each only when non-empty and overriding a pod label of the same key. Sorted.
 */
export function augmentLabels(
  podLabels: Readonly<Record<string, string>>,
  locality: Locality,
  clusterId: string,
  nodeName: string,
): Record<string, string> {
  // Assigned, not computed keys in a literal (V8 builds those through the runtime).
  const values: Record<string, string> = {};
  values[TOPOLOGY_REGION_LABEL] = locality.region;
  values[TOPOLOGY_ZONE_LABEL] = locality.zone;
  values[TOPOLOGY_SUBZONE_LABEL] = locality.subzone;
  values[CLUSTER_LABEL] = clusterId;
  values[NODE_HOSTNAME_LABEL] = nodeName;
  const own = Object.keys(podLabels);
  if (own.length === 0) {
    // The common case without pod labels: the added keys alone, already in order.
    const out: Record<string, string> = {};
    for (const key of augmentedKeys) if (values[key] !== "") out[key] = values[key] as string;
    return out;
  }
  const out: Record<string, string> = { ...podLabels };
  for (const key of augmentedKeys) if (values[key] !== "") out[key] = values[key] as string;
  return sortedRecord(out);
}

/** The keys augmentLabels adds, sorted. */
const augmentedKeys = [
  TOPOLOGY_REGION_LABEL,
  TOPOLOGY_ZONE_LABEL,
  TOPOLOGY_SUBZONE_LABEL,
  CLUSTER_LABEL,
  NODE_HOSTNAME_LABEL,
].sort();

function persistentSession(service: Service | undefined): boolean {
  return Boolean(service?.labels[PERSISTENT_SESSION_LABEL]);
}

function samePod(pod: PodInfo | undefined, ref: { namespace: string; name: string }): boolean {
  return pod !== undefined && pod.namespace === ref.namespace && pod.name === ref.name;
}
