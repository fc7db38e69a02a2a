/**
 * Which namespaces' ServiceEntries declare a host: keys.externalHost(host) holds one entry
 * [namespace, cluster, ServiceEntry name] per External record (keys.externalService()) of that host,
 * kept by the ServiceEntry ingest beside the records themselves. A Kubernetes Service's host names
 * its namespace (`<name>.<ns>.svc.<suffix>`); any other host (`api.example.com`, a short name
 * resolved to a non-Kubernetes host) can only be a ServiceEntry's, so a VirtualService or
 * DestinationRule event finds the services such a host touches with one read of this index instead
 * of listing every service. One value per host: it grows with the entries declaring that host only.
 *
 * A store written by an older version has records and no index: the first ingest batch indexes them
 * (`indexExternalHosts`, inside that batch's all-or-nothing commit) and marks the store indexed.
 */
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";

/** One External record of a host: [namespace, cluster, ServiceEntry name]. */
export type ExternalHostEntry = [namespace: string, cluster: string, serviceEntry: string];

/** Stored under keys.externalHost(): entries sorted. */
export interface ExternalHostRecord {
  entries: ExternalHostEntry[];
}

const same = (a: ExternalHostEntry, b: ExternalHostEntry) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
const order = (a: ExternalHostEntry, b: ExternalHostEntry) => {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as string) < (b[i] as string) ? -1 : 1;
  return 0;
};

/** Adds (`present`) or removes one record of `host` from the index; writes only on a change. */
export async function setExternalHost(
  store: Store,
  host: string,
  entry: ExternalHostEntry,
  present: boolean,
): Promise<void> {
  const key = keys.externalHost(host);
  const entries = (await store.get<ExternalHostRecord>(key))?.value.entries ?? [];
  const has = entries.some((e) => same(e, entry));
  if (has === present) return;
  const next = present ? [...entries, entry].sort(order) : entries.filter((e) => !same(e, entry));
  if (next.length === 0) await store.delete(key);
  else await store.put(key, { entries: next });
}

/** The namespaces whose ServiceEntries declare each of `hosts` (hosts none declares are absent): one getMany. */
export async function externalHostNamespaces(
  store: Store,
  hosts: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (hosts.length === 0) return out;
  const got = await store.getMany<ExternalHostRecord>(hosts.map(keys.externalHost));
  for (const host of hosts) {
    const entries = got.get(keys.externalHost(host))?.value.entries;
    if (entries) out.set(host, [...new Set(entries.map((e) => e[0]))]);
  }
  return out;
}

/**
 * Indexes every External record of a store not yet marked indexed (an older version's, or a new
 * store: then an empty listing) and marks it. Returns how many records it indexed; a marked store
 * costs one read.
 */
export async function indexExternalHosts(store: Store): Promise<number> {
  if (await store.get(keys.externalHostIndex())) return 0;
  let indexed = 0;
  for (const e of await listAll<{ hostname: string; namespace: string; clusterId: string }>(
    store,
    keys.services(),
  )) {
    // svc/<ns>/<host>/<cluster>~<ServiceEntry name>: the "~" only an External record's key has.
    const last = decodeSegment(e.key.slice(e.key.lastIndexOf("/") + 1));
    const tilde = last.indexOf("~");
    if (tilde < 0) continue;
    await setExternalHost(
      store,
      e.value.hostname,
      [e.value.namespace, last.slice(0, tilde), last.slice(tilde + 1)],
      true,
    );
    indexed++;
  }
  await store.put(keys.externalHostIndex(), { indexed: true });
  return indexed;
}
