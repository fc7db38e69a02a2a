/**
 * /debug/registryz: the services held, one item per cluster's record (keys.services()), shaped like
 * istiod's registryz (model.Service: Attributes, ports, hostname, ...). Kubernetes Services and
 * ServiceEntry hosts alike (ServiceRegistry says which). Paged: `limit` records, at most maxPageBytes of JSON.
 */
import type { Service } from "../model/service.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { type DebugList, mapPage, readPage } from "./page.ts";
import type { Parsed } from "./params.ts";

/** One service record as registryz shows it. */
export interface RegistryzItem {
  Attributes: {
    ServiceRegistry: "Kubernetes" | "External";
    Name: string;
    Namespace: string;
    Labels?: Record<string, string>;
    ExportTo?: string[];
  };
  ports: { name: string; port: number; protocol: string }[];
  hostname: string;
  clusterVIPs: { Addresses: Record<string, string[]> };
  Resolution: string;
  MeshExternal?: boolean;
  /** The cluster this record came from (the ServiceEntry's name follows a `~` for External ones). */
  cluster: string;
}

/** The registryz item of one stored record (`key`: its store key, which tells a ServiceEntry's). Pure. */
export function registryzItem(s: Service, key: string): RegistryzItem {
  const external = key.slice(key.lastIndexOf("/") + 1).includes("~");
  return {
    Attributes: {
      ServiceRegistry: external ? "External" : "Kubernetes",
      Name: s.name,
      Namespace: s.namespace,
      ...(Object.keys(s.labels).length > 0 && { Labels: s.labels }),
      ...(s.exportTo !== undefined && { ExportTo: s.exportTo }),
    },
    ports: s.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
    hostname: s.hostname,
    clusterVIPs: { Addresses: { [s.clusterId]: s.addresses } },
    Resolution: s.resolution,
    ...(s.meshExternal && { MeshExternal: true }),
    cluster: s.clusterId,
  };
}

/** What GET /debug/registryz was asked: a namespace narrows the listing. */
export interface RegistryzQuery {
  limit: number;
  cursor?: string;
  namespace?: string;
}

/** The service records of one page, in key order (namespace, host, cluster). */
export async function readRegistryz(
  store: Store,
  q: RegistryzQuery,
): Promise<Parsed<DebugList<RegistryzItem>>> {
  const prefix = q.namespace === undefined ? keys.services() : keys.servicesIn(q.namespace);
  const page = await readPage<Service>(store, prefix, q.limit, q.cursor);
  if (!page.ok) return page;
  return { ok: true, value: mapPage(page.value, (e) => registryzItem(e.value, e.key), true) };
}
