/** v1 Service ─▶ model Service (istio pilot/pkg/serviceregistry/kube/conversion.go ConvertService). */
import type { Resolution, Service, ServicePort } from "../../model/index.ts";
import { serviceHostname } from "../../model/index.ts";
import { convertProtocol } from "./protocol.ts";
import type { EndpointSlice, KubeService, KubeServicePort } from "./types.ts";
import { CLUSTER_IP_NONE, SERVICE_NAME_LABEL } from "./types.ts";

/** Where a converted object came from and how its hostnames are spelled. */
export interface ServiceConversionOptions {
  /** The cluster (shard) that reported the object. */
  clusterId: string;
  /** `cluster.local` unless the cluster says otherwise. */
  domainSuffix: string;
}

/**
 * Converts a Service as one cluster sees it. Pure: the same object gives the same model.
 * Hostname `<name>.<ns>.svc.<suffix>`; ExternalName ▶ Alias; `clusterIP: None` ▶ Passthrough with
 * no addresses; otherwise ClientSideLB on every cluster IP (`clusterIPs`, else `clusterIP`).
 */
export function convertService(obj: KubeService, options: ServiceConversionOptions): Service {
  const { name, namespace } = obj.metadata;
  const spec = obj.spec;
  const { resolution, addresses } = resolve(spec.type, spec.clusterIP, spec.clusterIPs);
  return {
    hostname: serviceHostname(name, namespace, options.domainSuffix),
    name,
    namespace,
    clusterId: options.clusterId,
    resolution,
    addresses,
    ports: (spec.ports ?? []).map(convertPort),
    labels: { ...(obj.metadata.labels ?? {}) },
  };
}

function resolve(
  type: KubeService["spec"]["type"],
  clusterIP: string | undefined,
  clusterIPs: string[] | undefined,
): { resolution: Resolution; addresses: string[] } {
  // Istio resolves ExternalName services as an alias of the external name (its default since
  // ENABLE_EXTERNAL_NAME_ALIAS). They never have a cluster IP.
  if (type === "ExternalName") return { resolution: "Alias", addresses: [] };
  // Headless: the client connects to the pod it resolved; the proxy must not load balance.
  if (clusterIP === CLUSTER_IP_NONE) return { resolution: "Passthrough", addresses: [] };
  const ips = clusterIPs && clusterIPs.length > 0 ? clusterIPs : clusterIP ? [clusterIP] : [];
  return { resolution: "ClientSideLB", addresses: ips.filter((ip) => ip !== "" && ip !== CLUSTER_IP_NONE) };
}

/** A Service port as the model names it: its name ("" when unnamed) and its Istio protocol. */
export function convertPort(port: KubeServicePort): ServicePort {
  return { name: port.name ?? "", port: port.port, protocol: convertProtocol(port) };
}

/**
 * The Service an EndpointSlice belongs to, from its `kubernetes.io/service-name` label;
 * undefined when the label is missing or empty (such a slice feeds no service).
 */
export function serviceNameOfSlice(slice: Pick<EndpointSlice, "metadata">): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name ? name : undefined;
}
