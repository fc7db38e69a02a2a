/**
 * What a ServiceEntry or WorkloadEntry change touches, as Istio's serviceentry controller decides
 * it (pilot/pkg/serviceregistry/serviceentry/controller.go serviceEntryHandler and
 * workloadEntryHandler). Pure: the caller passes the old and new configs (undefined for an add or
 * a delete) and the ServiceEntries of the store; mutations return the push they need.
 */

import type { ConfigKey } from "../../model/index.ts";
import { serviceConfigKey } from "../../model/index.ts";
import { parseIp } from "../../model/ip.ts";
import { compareStrings } from "../kube/canonical.ts";
import {
  convertServiceEntry,
  isDnsServiceEntry,
  type ServiceEntryConfig,
  selectsWorkloadEntry,
  serviceEntryHosts,
} from "./service-entry.ts";
import type { WorkloadEntryConfig } from "./workload-entry.ts";

/** The hostnames a ServiceEntry change touches: the old hosts and the new, sorted, each once. */
export function serviceEntryChangedHosts(old?: ServiceEntryConfig, next?: ServiceEntryConfig): string[] {
  const hosts = [...(old ? serviceEntryHosts(old.spec) : []), ...(next ? serviceEntryHosts(next.spec) : [])];
  return [...new Set(hosts)].sort(compareStrings);
}

/** The push a ServiceEntry change needs. */
export interface ServiceEntryPushScope {
  /** A Full push, with configsUpdated naming these services (ServiceUpdate). False ▶ EDS only. */
  full: boolean;
  configsUpdated: ConfigKey[];
  /** Hosts whose endpoints the new spec defines (recompute their External shard). */
  endpointHosts: string[];
  /** Hosts the ServiceEntry no longer declares (drop their External shard and service record). */
  removedHosts: string[];
}

/**
 * Istio's serviceEntryHandler: services added, removed or changed (or any, when a targetPort
 * changed, since the model does not hold it) are a Full push naming them; so are the unchanged
 * services of a DNS ServiceEntry (its endpoints live in the cluster). When no service changed,
 * only endpoints may have: an EDS push. An identical spec still recomputes endpoints, which the
 * shard layer then finds equal (no push).
 */
export function serviceEntryPushScope(
  old?: ServiceEntryConfig,
  next?: ServiceEntryConfig,
): ServiceEntryPushScope {
  const before = new Map((old ? convertServiceEntry(old) : []).map((s) => [s.hostname, JSON.stringify(s)]));
  const after = new Map((next ? convertServiceEntry(next) : []).map((s) => [s.hostname, JSON.stringify(s)]));
  const targetPortsChanged = old !== undefined && next !== undefined && !sameTargetPorts(old, next);
  const updated = new Set<string>();
  for (const [host, json] of after) {
    const was = before.get(host);
    if (was === undefined || was !== json || targetPortsChanged || isDnsServiceEntry(next?.spec ?? {}))
      updated.add(host);
  }
  const removedHosts = [...before.keys()].filter((h) => !after.has(h)).sort(compareStrings);
  const namespace = (next ?? old)?.namespace ?? "";
  const keys = [...updated, ...removedHosts].sort(compareStrings).map((h) => serviceConfigKey(h, namespace));
  return {
    full: keys.length > 0,
    configsUpdated: keys,
    endpointHosts: [...after.keys()].sort(compareStrings),
    removedHosts,
  };
}

function sameTargetPorts(a: ServiceEntryConfig, b: ServiceEntryConfig): boolean {
  const pa = a.spec.ports ?? [];
  const pb = b.spec.ports ?? [];
  return pa.length === pb.length && pa.every((p, i) => (p.targetPort ?? 0) === (pb[i]?.targetPort ?? 0));
}

/** The push a WorkloadEntry change needs. */
export interface WorkloadEntryPushScope {
  /** ServiceEntries whose endpoints change: those selecting the old or the new WorkloadEntry. */
  serviceEntries: ServiceEntryConfig[];
  /** Their hosts, for the EDS update of their External shards. */
  endpointHosts: { namespace: string; hostname: string }[];
  /** Full push when a DNS ServiceEntry is among them (its endpoints live in the Cluster), naming its hosts (EndpointUpdate). */
  full: boolean;
  configsUpdated: ConfigKey[];
}

/**
 * Istio's workloadEntryHandler: the ServiceEntries of the WorkloadEntry's namespace whose selector
 * matches its new labels, plus those that matched its old labels (a WorkloadEntry relabelled out of
 * a selector leaves it). A hostname address only counts for DNS ServiceEntries. An EDS push, or a
 * Full push naming the hosts of the DNS ServiceEntries among them. Sorted by namespace and name.
 */
export function workloadEntryPushScope(
  old: WorkloadEntryConfig | undefined,
  next: WorkloadEntryConfig | undefined,
  serviceEntries: readonly ServiceEntryConfig[],
): WorkloadEntryPushScope {
  const current = next ?? old;
  const hostnameOnly = current !== undefined && !parseIp(current.spec.address ?? "").ok;
  const affected = serviceEntries
    .filter((se) => !hostnameOnly || isDnsServiceEntry(se.spec))
    .filter((se) => [old, next].some((we) => we !== undefined && selectsWorkloadEntry(se, we)))
    .sort((a, b) => compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name));
  const endpointHosts = affected.flatMap((se) =>
    serviceEntryHosts(se.spec).map((hostname) => ({ namespace: se.namespace, hostname })),
  );
  const dns = affected.filter((se) => isDnsServiceEntry(se.spec));
  const keys = new Map<string, ConfigKey>();
  for (const se of dns)
    for (const h of serviceEntryHosts(se.spec))
      keys.set(`${se.namespace}/${h}`, serviceConfigKey(h, se.namespace));
  return {
    serviceEntries: affected,
    endpointHosts,
    full: dns.length > 0,
    configsUpdated: [...keys.keys()].sort(compareStrings).map((k) => keys.get(k) as ConfigKey),
  };
}
