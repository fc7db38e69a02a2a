/**
 * The outbound clusters of one service a sidecar sees, as istiod's buildOutboundClusters and
 * applyDestinationRule / buildSubsetCluster build them (pilot/pkg/networking/core/cluster.go,
 * cluster_builder.go): per service port (UDP skipped, Alias services skipped) `outbound|<port>||<host>`,
 * then one `outbound|<port>|<subset>|<host>` per DestinationRule subset in the rule's order. They
 * depend only on the view and the proxy's IP family (DNS lookup family), so proxies sharing a view
 * and a family share them.
 */
import { Cluster_DiscoveryType, ClusterSchema } from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Endpoint, Service } from "../../../model/index.ts";
import { effectivePolicy } from "../../../registry/istio/destination-rule.ts";
import { isExternalService } from "../../../registry/istio/external-services.ts";
import type { SecurityPolicies } from "../../../registry/istio/security.ts";
import type { LoadBalancer } from "../../../registry/istio/traffic-policy.ts";
import type { Generated, ServiceView } from "../../types.ts";
import { endpointsByPort, hasLabels, TLS_MODE_LABEL } from "../endpoint.ts";
import { clusterName, mergedPorts, sortedServices, subsetClusterName } from "../shared.ts";
import { applyTrafficPolicy, type BuildContext, draftCluster, finishCluster } from "./cluster-build.ts";
import { istioMutualSni } from "./cluster-common.ts";
import type { ServiceMtls } from "./cluster-tls.ts";
import { discoveryType } from "./cluster-traffic.ts";

/**
 * convertResolution for a sidecar: ClientSideLB (Kubernetes, ServiceEntry STATIC) ▶ EDS; DNSLB
 * (ServiceEntry DNS) ▶ STRICT_DNS; DNSRoundRobinLB ▶ LOGICAL_DNS; Passthrough (headless, ServiceEntry
 * NONE) ▶ ORIGINAL_DST (PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES off, its default).
 */
export function sidecarDiscoveryType(s: Service): Cluster_DiscoveryType {
  switch (s.resolution) {
    case "DNSLB":
      return Cluster_DiscoveryType.STRICT_DNS;
    case "DNSRoundRobinLB":
      return Cluster_DiscoveryType.LOGICAL_DNS;
    case "Passthrough":
      return Cluster_DiscoveryType.ORIGINAL_DST;
    default:
      return Cluster_DiscoveryType.EDS;
  }
}

/** The outbound clusters of one service view; none for a view without records or an Alias service. */
export function outboundClusters(view: ServiceView, ctx: BuildContext): Generated<typeof ClusterSchema>[] {
  const services = sortedServices(view);
  const svc = services[0];
  if (!svc || svc.resolution === "Alias") return [];
  const out: Generated<typeof ClusterSchema>[] = [];
  const dr = view.destinationRule;
  const type = sidecarDiscoveryType(svc);
  const inline = type === Cluster_DiscoveryType.STRICT_DNS || type === Cluster_DiscoveryType.LOGICAL_DNS;
  const ports = mergedPorts(view).filter((p) => p.protocol !== "UDP");
  const endpoints = inline ? endpointsByPort(view, ports) : undefined;
  const serviceAccounts = accountsOf(view, services);
  const meshExternal = svc.meshExternal === true;
  const autoMtls = ctx.mesh.enableAutoMtls !== false;
  const tlsBase = { serviceAccounts, meshExternal, external: isExternalService(svc), autoMtls };
  // Split by port once, and only when a passthrough destination's mode depends on its endpoints.
  let split = endpoints;
  const onPortAt = (i: number): readonly Endpoint[] => {
    if (!split) split = endpointsByPort(view, ports);
    return split[i] ?? [];
  };
  const mtlsOf = (lb: LoadBalancer | undefined, i: number): ServiceMtls =>
    inferServiceMtls(svc, lb, () => onPortAt(i), ctx.security);
  const rule = dr && { name: dr.name, namespace: dr.namespace };
  for (const [i, port] of ports.entries()) {
    const onPort: readonly Endpoint[] = endpoints?.[i] ?? [];
    const name = clusterName(view.hostname, port.port);
    const d = draftCluster(name, type, port.protocol, onPort, ctx);
    if (!d) continue;
    const sni = istioMutualSni(view.hostname, port.port, "");
    const portPolicy = effectivePolicy(dr, port.port);
    const serviceMtls = mtlsOf(dr?.trafficPolicy?.loadBalancer, i);
    applyTrafficPolicy(d, portPolicy, port.protocol, ctx, { ...tlsBase, sni, serviceMtls });
    // The subsets take the default cluster's type after its policy (a PASSTHROUGH rule makes it ORIGINAL_DST).
    const defaultType = discoveryType(d) ?? type;
    const meta = {
      services: [svc],
      port: port.port,
      external: meshExternal,
      ...(rule && { rule, alpnOverride: originatesTls(portPolicy) }),
    };
    out.push({ name, schema: ClusterSchema, message: finishCluster(d, meta) });
    for (const subset of dr?.subsets ?? []) {
      const policy = effectivePolicy(dr, port.port, subset.name);
      const passthrough =
        policy?.loadBalancer && "simple" in policy.loadBalancer
          ? policy.loadBalancer.simple === "PASSTHROUGH"
          : false;
      const subType = passthrough ? Cluster_DiscoveryType.ORIGINAL_DST : defaultType;
      const inlineSub = !passthrough && subType !== Cluster_DiscoveryType.EDS;
      const subEps = inlineSub ? onPort.filter((e) => hasLabels(e.labels, subset.labels)) : [];
      const subName = subsetClusterName(view.hostname, port.port, subset.name);
      const sd = draftCluster(subName, subType, port.protocol, subEps, ctx);
      if (!sd) continue;
      const subSni = istioMutualSni(view.hostname, port.port, subset.name);
      const subMtls = mtlsOf(subset.trafficPolicy?.loadBalancer, i);
      applyTrafficPolicy(sd, policy, port.protocol, ctx, { ...tlsBase, sni: subSni, serviceMtls: subMtls });
      out.push({
        name: subName,
        schema: ClusterSchema,
        message: finishCluster(sd, {
          services: [svc],
          port: port.port,
          ...(rule && { rule, alpnOverride: originatesTls(policy) }),
          subset: subset.name,
        }),
      });
    }
  }
  return out;
}

/**
 * PushContext.BestEffortInferServiceMTLSMode for a service that is not mesh-external: a Passthrough
 * service (or a PASSTHROUGH load balancer, `lb` being the rule's or subset's own) is DISABLE unless
 * it has endpoints on the port and none is labelled tlsMode `disabled` or unlabelled; else the mode of its namespace's (or the
 * mesh's) PeerAuthentication, PERMISSIVE without one. Workload-level policies do not count: the
 * client cannot know which endpoint it reaches.
 */
export function inferServiceMtls(
  svc: Service,
  lb: LoadBalancer | undefined,
  endpoints: () => readonly Endpoint[],
  security: SecurityPolicies | undefined,
): ServiceMtls {
  const passthrough = lb !== undefined && "simple" in lb && lb.simple === "PASSTHROUGH";
  if (svc.resolution === "Passthrough" || passthrough) {
    const on = endpoints();
    // An endpoint without the label is a pod without a sidecar (kube.PodTLSMode: disabled).
    const disabled = (e: Endpoint) => (e.labels[TLS_MODE_LABEL] ?? "disabled") === "disabled";
    if (on.length === 0 || on.some(disabled)) return "DISABLE";
  }
  return security?.mtlsFor({ namespace: svc.namespace, labels: {} }).mode ?? "PERMISSIVE";
}

/** A SIMPLE or MUTUAL `tls`: the cluster originates TLS itself (AddALPNOverrideToMetadata). */
function originatesTls(policy: ReturnType<typeof effectivePolicy>): boolean {
  const mode = policy?.tls?.mode;
  return mode === "SIMPLE" || mode === "MUTUAL";
}

/** push.ServiceAccounts plus a ServiceEntry's subjectAltNames: the SANs an ISTIO_MUTUAL client accepts. */
export function accountsOf(view: ServiceView, services: readonly Service[]): string[] {
  const all = new Set(view.shards?.serviceAccounts ?? []);
  for (const s of services) for (const san of s.subjectAltNames ?? []) all.add(san);
  return [...all].sort();
}
