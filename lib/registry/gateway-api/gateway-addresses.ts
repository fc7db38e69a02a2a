/**
 * The Services a Gateway binds to and what its status says of them, as istiod's
 * extractGatewayServices and ResolveGatewayInstances: Hostname addresses (else the Service istiod
 * would deploy, `<name>-<class>`), each listener port looked up on the known Services, the
 * Programmed condition and the addresses reported (load balancer addresses, else hostnames).
 */

import { type ConditionSpec, humanReadableJoin } from "./conditions.ts";
import type { GatewaySpec } from "./types.ts";

/** A Service as the Gateway's status reads it. */
export interface GatewayServiceInfo {
  ports: number[];
  /** Load balancer and external addresses (Istio ClusterExternalAddresses). */
  externalAddresses: string[];
}

/** extractGatewayServices: the Services the Gateway binds to (Hostname addresses, else `<name>-istio`). */
export function gatewayServices(
  suffix: string,
  gw: { namespace: string; name: string; spec: GatewaySpec },
): { hosts: string[]; error?: { reason: string; message: string } } {
  const addresses = gw.spec.addresses ?? [];
  if (addresses.length === 0)
    return { hosts: [`${gw.name}-${gw.spec.gatewayClassName}.${gw.namespace}.svc.${suffix}`] };
  const hosts: string[] = [];
  const skipped: string[] = [];
  for (const a of addresses) {
    if (a.type !== undefined && a.type !== "Hostname") skipped.push(a.value);
    else hosts.push(a.value.includes(".") ? a.value : `${a.value}.${gw.namespace}.svc.${suffix}`);
  }
  if (skipped.length === 0) return { hosts };
  return {
    hosts,
    error: {
      reason: "UnsupportedAddress",
      message: `only Hostname is supported, ignoring [${skipped.join(" ")}]`,
    },
  };
}

/** reportGatewayStatus's address and Programmed part (ResolveGatewayInstances over the known Services). */
export function programmed(
  ctx: { servicesByHost: ReadonlyMap<string, ReadonlyMap<string, GatewayServiceInfo>> },
  gw: { namespace: string; name: string; spec: GatewaySpec },
  hosts: string[],
  ports: number[],
): { spec: ConditionSpec; addresses: string[] } {
  const internal = new Set<string>();
  const external = new Set<string>();
  const warnings: string[] = [];
  let unusable = false;
  for (const h of hosts) {
    const byNs = ctx.servicesByHost.get(h);
    const svc = byNs?.get(gw.namespace);
    if (!svc) {
      const others = [...(byNs?.keys() ?? [])].sort().map((n) => `"${n}"`);
      warnings.push(
        others.length > 0
          ? `hostname "${h}" not found in namespace "${gw.namespace}", but it was found in namespace(s) ${others.join(", ")}`
          : `hostname "${h}" not found`,
      );
      unusable = true;
      continue;
    }
    for (const port of ports) {
      if (svc.ports.includes(port)) {
        internal.add(`${h}:${port}`);
        for (const a of svc.externalAddresses) external.add(a);
      } else {
        warnings.push(`port ${port} not found for hostname "${h}"`);
        unusable = true;
      }
    }
  }
  warnings.sort();
  const internalList = [...internal].sort();
  const spec: ConditionSpec = { reason: "Programmed", message: "Resource programmed" };
  if (internalList.length > 0)
    spec.message = `Resource programmed, assigned to service(s) ${humanReadableJoin(internalList)}`;
  if (hosts.length === 0)
    spec.error = { reason: "UnsupportedAddress", message: "Failed to assign to any requested addresses" };
  else if (warnings.length > 0)
    spec.error = {
      reason: unusable ? "AddressNotUsable" : "AddressNotAssigned",
      message:
        internalList.length > 0
          ? `Assigned to service(s) ${humanReadableJoin(internalList)}, but failed to assign to all requested addresses: ${warnings.join("; ")}`
          : `Failed to assign to any requested addresses: ${warnings.join("; ")}`,
    };
  // The istio class reports Hostname addresses: external ones when the Services have them.
  const addresses =
    external.size > 0
      ? [...external].sort()
      : [...new Set(internalList.map((i) => i.slice(0, i.lastIndexOf(":"))))];
  return { spec, addresses };
}
