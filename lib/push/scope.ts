/** Which services a push touches: the ConfigsUpdated of a merged PushRequest, resolved against the store. */
import { type PushRequest, parseConfigKey, type Service } from "../model/index.ts";
import { decodeSegment, keys, listAll, type Store } from "../store/index.ts";

/** One service, by namespace and hostname. */
export interface ServiceRef {
  namespace: string;
  hostname: string;
  /**
   * The service's records (one per cluster, in key order), when the scope was found by listing
   * every service: planning uses them instead of reading them once more. Absent: read them.
   */
  services?: Service[];
}

/**
 * The services to regenerate, sorted. Unknown scope (null configs, or a kind other than
 * ServiceEntry) means every service the store knows, plus every service that generated
 * resources before, so that vanished services have their resources removed.
 */
export async function servicesInScope(store: Store, request: PushRequest): Promise<ServiceRef[]> {
  const configs = request.configsUpdated?.map(parseConfigKey);
  const found = new Map<string, ServiceRef>();
  const services = configs?.every((c) => c.kind === "ServiceEntry") ? configs : undefined;
  if (services) {
    for (const c of services)
      found.set(`${c.namespace}/${c.name}`, { namespace: c.namespace, hostname: c.name });
  } else {
    for (const prefix of [keys.services(), "gen/"]) {
      for (const e of await listAll(store, prefix)) {
        const [, namespace, hostname] = e.key.split("/");
        if (!namespace || !hostname) continue;
        let ref = found.get(`${namespace}/${hostname}`);
        if (!ref) {
          ref = { namespace: decodeSegment(namespace), hostname: decodeSegment(hostname), services: [] };
          found.set(`${namespace}/${hostname}`, ref);
        }
        if (prefix === keys.services()) ref.services?.push(e.value as Service);
      }
    }
  }
  return [...found.values()].sort((a, b) =>
    a.namespace === b.namespace ? cmp(a.hostname, b.hostname) : cmp(a.namespace, b.namespace),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
