/**
 * The ServiceEntry registry beside the Kubernetes one: the Service records a ServiceEntry stores
 * (one per host, provider External, tagged with the entry they came from), and the one coherent
 * set of records a flush generates a host from (Istio's precedence: Kubernetes first, else the
 * oldest ServiceEntry). Pure.
 */
import type { Service } from "../../model/index.ts";
import { hostPrecedence, type ServiceEntryCandidate } from "./precedence.ts";
import { convertServiceEntry, type ServiceEntryConfig } from "./service-entry.ts";

/** Where an External record came from: what Istio orders competing ServiceEntries by. */
export interface ServiceEntryOrigin {
  /** The ServiceEntry's name (its namespace is the record's). */
  name: string;
  /** Its metadata.creationTimestamp, when it had one. */
  creationTimestamp?: string;
}

/**
 * A Service converted from a ServiceEntry, as stored under keys.externalService(): the model
 * Service plus its origin, the one field a Kubernetes record never has.
 */
export interface ExternalService extends Service {
  serviceEntry: ServiceEntryOrigin;
}

/** True for a record of the ServiceEntry registry. */
export function isExternalService(s: Service): s is ExternalService {
  return Object.hasOwn(s, "serviceEntry");
}

/** The External records of a ServiceEntry, one per host (convertServiceEntry), each tagged with its origin. */
export function externalServices(se: ServiceEntryConfig & { creationTimestamp?: string }): ExternalService[] {
  const serviceEntry: ServiceEntryOrigin = {
    name: se.name,
    ...(se.creationTimestamp !== undefined && { creationTimestamp: se.creationTimestamp }),
  };
  return convertServiceEntry(se).map((s) => ({ ...s, serviceEntry: { ...serviceEntry } }));
}

/**
 * The records one host is generated from, given every record stored for it (one namespace, any
 * registry): with no External record, `records` itself (the Kubernetes path is untouched); else
 * the winners of hostPrecedence: every cluster's Kubernetes record when there is one, otherwise the
 * one oldest ServiceEntry's record. So each host gets one coherent set of clusters and routes.
 */
export function servingServices(records: readonly Service[]): readonly Service[] {
  if (!records.some(isExternalService)) return records;
  const kubernetes: Service[] = [];
  const candidates: ServiceEntryCandidate[] = [];
  for (const s of records) {
    if (!isExternalService(s)) kubernetes.push(s);
    else
      candidates.push({
        service: s,
        configName: s.serviceEntry.name,
        ...(s.serviceEntry.creationTimestamp !== undefined && {
          creationTimestamp: s.serviceEntry.creationTimestamp,
        }),
      });
  }
  return hostPrecedence(kubernetes, candidates).flatMap((p) => p.services);
}

/**
 * True when a host's serving records resolve by DNS (ServiceEntry DNS or DNS_ROUND_ROBIN): its
 * clusters carry their endpoint inline, for the client to resolve (LOGICAL_DNS).
 */
export function resolvesByDns(services: readonly Service[]): boolean {
  return (
    services.length > 0 &&
    services.every((s) => s.resolution === "DNSLB" || s.resolution === "DNSRoundRobinLB")
  );
}
