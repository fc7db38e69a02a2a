/**
 * The class keys of the sidecar snapshots (lib/xds/sidecar-snapshots.ts explains the sharing rule):
 * every input the generators read of a proxy beyond its class, so two proxies share a snapshot
 * exactly when they would get the same resources.
 */
import type { PolicyWorkload, SecurityPolicies, WorkloadAuthorization } from "../registry/istio/security.ts";
import type { SidecarModel } from "../registry/istio/sidecar.ts";
import type { ServiceInstance, SidecarProxy } from "../resources/generators/sidecar/types.ts";

/** The outbound class of a proxy (see the module comment). */
export function outboundKey(p: SidecarProxy): string {
  const v4 = p.ipAddresses.some((ip) => !ip.includes(":"));
  const v6 = p.ipAddresses.some((ip) => ip.includes(":"));
  return [
    p.namespace,
    p.parts.dnsDomain,
    p.metadata.clusterId ?? "",
    `${v4 ? 4 : ""}${v6 ? 6 : ""}`,
    p.metadata.interceptionMode ?? "",
  ].join("\n");
}

/**
 * The inbound class: the outbound class, the instance signature and the security signature, plus the proxy's IPs when its
 * Sidecar has an ingress listener whose defaultEndpoint is a wildcard (`0.0.0.0:<port>`, `[::]:<port>`):
 * its inbound cluster then sends to the proxy's own IP (inbound-ingress.ts ingressEndpoint), which
 * replicas do not share.
 */
export function inboundKey(
  outbound: string,
  sig: string,
  proxy: SidecarProxy,
  scope: SidecarModel | undefined,
  security: string,
): string {
  const own = scope?.ingress?.some(
    (l) => l.defaultEndpoint.startsWith("0.0.0.0:") || l.defaultEndpoint.startsWith("[::]:"),
  );
  const base = `${outbound}\n${sig}\n${security}`;
  return own ? `${base}\n${proxy.ipAddresses.join(",")}` : base;
}

/**
 * What the inbound side reads of the policies for one workload: its effective mTLS and the
 * AuthorizationPolicies selecting it, by action and namespace/name (oldest first, as applied).
 */
export function securitySignature(
  security: SecurityPolicies,
  workload: PolicyWorkload,
  policies: WorkloadAuthorization,
): string {
  const names = (list: readonly { namespace: string; name: string }[]) =>
    list.map((p) => `${p.namespace}/${p.name}`);
  return JSON.stringify([
    security.mtlsFor(workload),
    names(policies.custom),
    names(policies.deny),
    names(policies.allow),
    names(policies.audit),
  ]);
}

/** What the inbound generators read of the instances, in order. */
export function instanceSignature(instances: readonly ServiceInstance[]): string {
  return JSON.stringify(
    instances.map((i) => [
      i.service.hostname,
      i.service.name,
      i.service.namespace,
      i.service.meshExternal === true,
      i.servicePort.port,
      i.servicePort.protocol,
      i.targetPort,
    ]),
  );
}
