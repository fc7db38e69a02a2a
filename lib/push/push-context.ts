/**
 * The push context: one immutable model of "the mesh at push N" that every generator reads (as
 * Istio's PushContext, pilot/pkg/model/push_context.go). It holds the VirtualServices and
 * DestinationRules (loadRoutingConfigs), the ServiceEntry hosts, the view table, every Sidecar
 * (workloadSelector ones too), the discovery-selector visibility and every served service with its
 * endpoint shards, filtered and resolved as the flush plans them.
 *
 * Built whole by loadPushContext (start-up, or a process that did not run the flush), or derived
 * from push N's by updatePushContext for what push N+1 changed (its configs, the services it
 * touched), reading only those. The flush builds one per push and hands it on (push-context-handoff.ts);
 * a reader in another process loads it with the same loader. The services (the largest part) are
 * read on first ask, so a process that never serves Envoy sidecars never holds the whole mesh.
 */
import type { Service } from "../model/index.ts";
import { servingServices } from "../registry/istio/external-services.ts";
import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import type { SidecarModel } from "../registry/istio/sidecar.ts";
import type { LabelSelector } from "../registry/kube/records.ts";
import type { EndpointShardsStored } from "../shards/shard-pieces.ts";
import { assembleShards } from "../shards/shard-store.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import type { ServiceView } from "../xds/types.ts";
import { createViewTableReader } from "../xds/view-store.ts";
import type { ViewTable } from "../xds/view-table.ts";
import { loadExternalHosts } from "./external-hosts.ts";
import type { PushVersion } from "./flush.ts";
import { loadRoutingConfigs, type RoutingConfigs } from "./istio-configs.ts";
import { readSidecars } from "./views.ts";
import { createVisibility, type Visibility } from "./visibility.ts";

/** How a context is read: the mesh settings generation depends on. */
export interface PushContextOptions {
  domainSuffix: string;
  /** meshConfig discoverySelectors: only matching namespaces are served. Default: all. */
  discoverySelectors?: readonly LabelSelector[];
}

/** Every served service of one push, keyed `<ns>/<host>` in key order (services no namespace serves are absent). */
export interface PushServices {
  /** Each service's records (every cluster's), as stored. */
  readonly records: ReadonlyMap<string, readonly Service[]>;
  /** Each service's records and shards, discovery selectors applied, one registry per host. */
  readonly views: ReadonlyMap<string, ServiceView>;
}

/** What generation reads at one push; immutable: the next push gets a new one. */
export interface PushContext {
  /** The push version it describes (keys.pushVersion()). */
  readonly version: number;
  readonly options: PushContextOptions;
  /** The VirtualServices and DestinationRules; undefined when there are none. */
  readonly routing: RoutingConfigs | undefined;
  /** Every stored Sidecar (one copy per namespace/name), oldest first, workloadSelector ones too. */
  readonly sidecars: readonly SidecarModel[];
  /** The view table (namespace-wide Sidecars, exportTo, overlays) as the push left it. */
  readonly table: ViewTable;
  /** Which namespaces of which cluster are served (discovery selectors). */
  readonly visibility: Visibility;
  /** The ServiceEntry hosts (read on first ask; undefined without routing: no route to judge). */
  externalHosts(): Promise<ExternalHosts | undefined>;
  /** Every served service with its shards (read on first ask, then shared). */
  services(): Promise<PushServices>;
  /** Whether the services were asked for (or derive from a context whose were): keeping them up to date then pays. */
  readonly servicesRead: boolean;
}

/** The parts of a context read per push by the flush, or by the loader. */
export interface PushContextParts {
  routing: RoutingConfigs | undefined;
  sidecars: readonly SidecarModel[];
  table: ViewTable;
  visibility: Visibility;
}

/** What push N+1 changed, for updatePushContext. */
export interface PushContextUpdate {
  version: number;
  /** Configs read again for this push (the flush reads them once per push); absent: push N's stand. */
  parts?: PushContextParts;
  /** Whether the ServiceEntry hosts may have changed (a Full push): read again on first ask. */
  full: boolean;
  /** The ServiceEntry hosts as the flush read them for this push (else read on first ask when they may have changed). */
  externalHosts?: () => Promise<ExternalHosts | undefined>;
  /**
   * Services the push planned (`<ns>/<host>` ─▶ their stored records and the view planned from
   * them); used only when push N's services were read. `null`: every service may have changed
   * (read all again on first ask).
   */
  planned?: ReadonlyMap<string, PlannedService> | null;
  /** Services whose endpoint shards changed (records unchanged): their shards are read again. */
  shards?: ReadonlySet<string>;
}

/** One service as the flush planned it. */
export interface PlannedService {
  records: readonly Service[];
  /** The view planned (the public one: records and shards, discovery selectors applied). */
  view: ServiceView;
}

/** Services read per getMany of their shards (as the flush plans them). */
const chunk = 256;

/**
 * The configs every generator reads, once per context: the VirtualServices and DestinationRules
 * and a fresh visibility (its namespace lookups cached for the context's push).
 */
export async function loadPushConfigs(
  store: Store,
  options: PushContextOptions,
): Promise<Pick<PushContextParts, "routing" | "visibility">> {
  const routing = await loadRoutingConfigs(store, options.domainSuffix);
  return { routing, visibility: createVisibility(store, options.discoverySelectors ?? []) };
}

/** Reads the context's parts once: routing and visibility (loadPushConfigs), the Sidecars, the view table. */
export async function loadPushContextParts(
  store: Store,
  options: PushContextOptions,
): Promise<PushContextParts> {
  const table = await createViewTableReader(store).read();
  const sidecars = await readSidecars(store);
  return { table, sidecars, ...(await loadPushConfigs(store, options)) };
}

/** Reads one whole context from the store (its services on first ask). */
export async function loadPushContext(
  store: Store,
  options: PushContextOptions & { version?: number },
): Promise<PushContext> {
  const version = options.version ?? (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;
  return createPushContext(store, version, options, await loadPushContextParts(store, options));
}

/**
 * A context of `parts` at push `version` whose services are read whole on first ask; `externalHosts`
 * (when the caller read them already) is taken, else read on first ask.
 */
export function createPushContext(
  store: Store,
  version: number,
  options: PushContextOptions,
  parts: PushContextParts,
  externalHosts?: () => Promise<ExternalHosts | undefined>,
): PushContext {
  return makeContext(store, version, options, parts, externalHosts, undefined);
}

/**
 * Push N+1's context from push N's: the parts given are taken, the ServiceEntry hosts read again
 * after a Full push, and only the services `update` names are read again (or taken as planned);
 * push N's services were never read: N+1's are read whole on first ask.
 */
export function updatePushContext(prev: PushContext, store: Store, update: PushContextUpdate): PushContext {
  const parts = update.parts ?? prev;
  const hosts =
    update.externalHosts ?? (update.full || parts.routing !== prev.routing ? undefined : prev.externalHosts);
  // Derivations wait until a reader asks: past maxPending unasked ones, the next reads all instead.
  const depth = (pending.get(prev) ?? 0) + 1;
  if (!prev.servicesRead || update.planned === null || depth > maxPending)
    return makeContext(store, update.version, prev.options, parts, hosts, undefined);
  const next = () =>
    prev.services().then(async (before) => {
      let services = before;
      if (update.shards && update.shards.size > 0)
        services = await withShards(store, parts, services, update.shards);
      if (update.planned && update.planned.size > 0) services = withPlanned(services, update.planned);
      return services;
    });
  const ctx = makeContext(store, update.version, prev.options, parts, hosts, next);
  pending.set(ctx, depth);
  return ctx;
}

/** Contexts whose services derive from an unasked chain: how long the chain is. */
const pending = new WeakMap<PushContext, number>();
/** The longest chain of unasked derivations kept (each holds what its push planned). */
const maxPending = 32;

function makeContext(
  store: Store,
  version: number,
  options: PushContextOptions,
  parts: PushContextParts,
  externalHosts: (() => Promise<ExternalHosts | undefined>) | undefined,
  derivation: (() => Promise<PushServices>) | undefined,
): PushContext {
  let derive = derivation;
  let services: Promise<PushServices> | undefined;
  let hosts: Promise<ExternalHosts | undefined> | undefined;
  const readHosts =
    externalHosts ??
    (() => {
      if (!hosts) {
        const read = parts.routing ? loadExternalHosts(store) : Promise.resolve(undefined);
        hosts = read;
        read.catch(() => {
          if (hosts === read) hosts = undefined;
        });
      }
      return hosts;
    });
  const ctx: PushContext = {
    version,
    options,
    routing: parts.routing,
    sidecars: parts.sidecars,
    table: parts.table,
    visibility: parts.visibility,
    externalHosts: readHosts,
    services() {
      if (!services) {
        pending.delete(ctx);
        const read = derive ? derive() : readAll(store, parts.visibility);
        services = read;
        // A failed read is not kept: the next ask reads every service again.
        read.catch(() => {
          if (services !== read) return;
          services = undefined;
          derive = undefined;
        });
      }
      return services;
    },
    get servicesRead() {
      return services !== undefined || derive !== undefined;
    },
  };
  return Object.freeze(ctx);
}

/** Every service with its shards, filtered and resolved as the flush plans them. */
async function readAll(store: Store, visibility: Visibility): Promise<PushServices> {
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
async function withShards(
  store: Store,
  parts: PushContextParts,
  services: PushServices,
  ids: ReadonlySet<string>,
): Promise<PushServices> {
  const records = new Map<string, readonly Service[]>();
  for (const id of ids) {
    const r = services.records.get(id);
    if (r) records.set(id, r);
  }
  if (records.size === 0) return services;
  const fresh = await readViews(store, parts.visibility, records);
  const views = new Map(services.views);
  for (const id of records.keys()) {
    const v = fresh.get(id);
    if (v) views.set(id, v);
    else views.delete(id);
  }
  return { records: services.records, views };
}

/** `services` with the planned services taken as planned, still in key order. */
function withPlanned(services: PushServices, planned: ReadonlyMap<string, PlannedService>): PushServices {
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
