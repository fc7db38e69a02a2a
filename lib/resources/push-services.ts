/**
 * The services of a push context (push-context.ts): every served service with its endpoint shards,
 * read whole as the flush plans them (discovery selectors applied, one registry per host), or
 * derived from the last push's by re-reading the shards of some, or taking some as a flush planned them.
 */
import type { Service } from "../model/index.ts";
import { servingServices } from "../registry/istio/external-services.ts";
import type { EndpointShardsStored } from "../shards/shard-pieces.ts";
import { assembleShards } from "../shards/shard-store.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import type { ServiceView } from "./types.ts";
import type { Visibility } from "./visibility.ts";

/** Every served service of one push, keyed `<ns>/<host>` in key order (services no namespace serves are absent). */
export interface PushServices {
  /** Each service's records (every cluster's), as stored. */
  readonly records: ReadonlyMap<string, readonly Service[]>;
  /** Each service's records and shards, discovery selectors applied, one registry per host. */
  readonly views: ReadonlyMap<string, ServiceView>;
}

/** One service as the flush planned it. */
export interface PlannedService {
  records: readonly Service[];
  /** The view planned (the public one: records and shards, discovery selectors applied). */
  view: ServiceView;
}

/** Services read per getMany of their shards (as the flush plans them). */
const chunk = 256;

/** Every service with its shards, filtered and resolved as the flush plans them. */
export async function readAll(store: Store, visibility: Visibility): Promise<PushServices> {
  const records = new Map<string, Service[]>();
  for (const e of await listAll<Service>(store, keys.services())) {
    const id = `${e.value.namespace}/${e.value.hostname}`;
    const list = records.get(id);
    if (list) list.push(e.value);
    else records.set(id, [e.value]);
  }
  return { records, views: await readViews(store, visibility, records) };
}

/** The services of `records` with their shards, in key order. */
async function readViews(
  store: Store,
  visibility: Visibility,
  records: ReadonlyMap<string, readonly Service[]>,
): Promise<Map<string, ServiceView>> {
  const out = new Map<string, ServiceView>();
  const ids = [...records.keys()].sort();
  for (let at = 0; at < ids.length; at += chunk) {
    const part = ids.slice(at, at + chunk);
    const refs = part.map((id) => records.get(id)?.[0] as Service);
    const wanted = refs.map((s) => keys.shards(s.namespace, s.hostname));
    const read = await store.getMany<EndpointShardsStored>(wanted);
    const shards = await assembleShards(
      store,
      wanted.map((k) => read.get(k)?.value),
    );
    for (let i = 0; i < part.length; i++) {
      const first = refs[i] as Service;
      const view = servedView(
        await visibility.filterView({
          hostname: first.hostname,
          namespace: first.namespace,
          services: [...(records.get(part[i] as string) ?? [])],
          shards: shards[i],
        }),
      );
      if (view) out.set(part[i] as string, view);
    }
  }
  return out;
}

/**
 * A service as a context holds it, from a view the flush planned or the loader filtered: its
 * records and shards only (routing is chosen per namespace by the reader); undefined when no
 * namespace serves it. A host both registries declare is served from one (servingServices).
 */
export function servedView(visible: ServiceView): ServiceView | undefined {
  if (visible.services.length === 0) return undefined;
  const served = servingServices(visible.services);
  return {
    hostname: visible.hostname,
    namespace: visible.namespace,
    services: served === visible.services ? visible.services : [...served],
    shards: visible.shards,
  };
}

/** `services` with the shards of `ids` read again (their records unchanged). */
export async function withShards(
  store: Store,
  visibility: Visibility,
  services: PushServices,
  ids: ReadonlySet<string>,
): Promise<PushServices> {
  const records = new Map<string, readonly Service[]>();
  for (const id of ids) {
    const r = services.records.get(id);
    if (r) records.set(id, r);
  }
  if (records.size === 0) return services;
  const fresh = await readViews(store, visibility, records);
  const views = new Map(services.views);
  for (const id of records.keys()) {
    const v = fresh.get(id);
    if (v) views.set(id, v);
    else views.delete(id);
  }
  return { records: services.records, views };
}

/** `services` with the planned services taken as planned, still in key order. */
export function withPlanned(
  services: PushServices,
  planned: ReadonlyMap<string, PlannedService>,
): PushServices {
  const records = new Map(services.records);
  const views = new Map(services.views);
  let added = false;
  for (const [id, p] of planned) {
    if (p.records.length > 0) records.set(id, p.records);
    else records.delete(id);
    const view = servedView(p.view);
    if (view) {
      added ||= !views.has(id);
      views.set(id, view);
    } else views.delete(id);
  }
  if (!added) return { records, views };
  const sorted = new Map([...views].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { records, views: sorted };
}
