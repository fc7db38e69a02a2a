/**
 * The push context: one immutable model of "the mesh at push N" that every generator reads (as
 * Istio's PushContext, pilot/pkg/model/push_context.go). It holds the VirtualServices and
 * DestinationRules (loadRoutingConfigs), the ServiceEntry hosts, the view table, every Sidecar
 * (workloadSelector ones too), the discovery-selector visibility and every served service with its
 * endpoint shards, filtered and resolved as the flush plans them.
 *
 * Built whole by loadPushContext (start-up, or a process that did not run the flush), or derived
 * from push N's by updatePushContext for what push N+1 changed (its configs, the services it
 * touched), reading only those. The flush builds one per push; the push carries it (Push.context)
 * to the readers in its process, and the core keeps the last one for the next flush to derive from;
 * a reader in another process loads it with the same loader. The services (the largest part) are
 * read on first ask, so a process that never serves Envoy sidecars never holds the whole mesh; so
 * are the Istio Gateways and the VirtualServices bound to them (gateway-configs.ts), which only
 * gateway proxies read.
 */

import { type GatewayApiTranslation, loadGatewayApi } from "../registry/gateway-api/index.ts";
import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import type { SecurityPolicies } from "../registry/istio/security.ts";
import { type SidecarModel, toSidecar } from "../registry/istio/sidecar.ts";
import {
  type EffectiveMesh,
  type MeshEnvOverrides,
  readEffectiveMesh,
  sameOverrides,
} from "../registry/mesh/effective-mesh.ts";
import { keys, type Store } from "../store/index.ts";
import type { PushVersion } from "./changes.ts";
import { loadExternalHosts } from "./external-hosts.ts";
import { type GatewayConfigs, loadGatewayConfigs } from "./gateway-configs.ts";
import { loadRoutingConfigs, type RoutingConfigs } from "./istio-configs.ts";
import { type PlannedService, type PushServices, readAll, withPlanned, withShards } from "./push-services.ts";
import { loadSecurityPolicies, readConfigModels } from "./security-policies.ts";
import { createViewTableReader } from "./view-store.ts";
import type { ViewTable } from "./view-table.ts";
import { createVisibility, type Visibility } from "./visibility.ts";

/** How a context is read: the mesh settings generation depends on. */
export interface PushContextOptions {
  domainSuffix: string;
  /** The mesh settings the host's environment set explicitly: they win over the stored MeshConfig. */
  meshEnv?: MeshEnvOverrides;
}

/** What generation reads at one push; immutable: the next push gets a new one. */
export interface PushContext {
  /** The push version it describes (keys.pushVersion()). */
  readonly version: number;
  readonly options: PushContextOptions;
  /** The effective mesh settings (effective-mesh.ts): read once per push naming MeshConfig, else kept. */
  readonly mesh: EffectiveMesh;
  /** The VirtualServices and DestinationRules; undefined when there are none. */
  readonly routing: RoutingConfigs | undefined;
  /** Every stored Sidecar (one copy per namespace/name), oldest first, workloadSelector ones too. */
  readonly sidecars: readonly SidecarModel[];
  /** The view table (namespace-wide Sidecars, exportTo, overlays) as the push left it. */
  readonly table: ViewTable;
  /** Which namespaces of which cluster are served (discovery selectors). */
  readonly visibility: Visibility;
  /** The PeerAuthentications and AuthorizationPolicies, answering per workload. */
  readonly security: SecurityPolicies;
  /** The ServiceEntry hosts (read on first ask; undefined without routing: no route to judge). */
  externalHosts(): Promise<ExternalHosts | undefined>;
  /** Every served service with its shards (read on first ask, then shared). */
  services(): Promise<PushServices>;
  /** The Gateway API translated as this push reads it: Istio Gateways, VirtualServices, statuses. */
  readonly gatewayApi: GatewayApiTranslation;
  /**
   * The Istio Gateways and the VirtualServices bound to gateways, the stored ones and the Gateway
   * API's translated ones (read on first ask, then shared).
   */
  gateways(): Promise<GatewayConfigs>;
  /** Whether the services were asked for (or derive from a context whose were): keeping them up to date then pays. */
  readonly servicesRead: boolean;
}

/**
 * Whether `ctx` describes push `version` as a reader with `options` would build it (a host generating
 * for another domain suffix, other mesh overrides or other extra gateway configs loads its own).
 */
export function contextFits(ctx: PushContext, version: number, options: PushContextOptions): boolean {
  const a = ctx.options;
  return (
    ctx.version === version &&
    a.domainSuffix === options.domainSuffix &&
    sameOverrides(a.meshEnv, options.meshEnv)
  );
}

/** The parts of a context read per push by the flush, or by the loader. */
export interface PushContextParts {
  mesh: EffectiveMesh;
  routing: RoutingConfigs | undefined;
  sidecars: readonly SidecarModel[];
  table: ViewTable;
  visibility: Visibility;
  security: SecurityPolicies;
  gatewayApi: GatewayApiTranslation;
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

/**
 * The configs every generator reads, once per context: the effective mesh settings, the
 * VirtualServices and DestinationRules, the security policies and a fresh visibility (its namespace
 * lookups cached for the context's push). `kept` holds what the caller knows did not change: the
 * mesh settings (a push naming no MeshConfig) and the security policies (one naming no policy).
 */
export async function loadPushConfigs(
  store: Store,
  options: PushContextOptions,
  kept?: { security?: SecurityPolicies; mesh?: EffectiveMesh },
): Promise<Pick<PushContextParts, "mesh" | "routing" | "visibility" | "security" | "gatewayApi">> {
  const mesh = kept?.mesh ?? (await readEffectiveMesh(store, options.meshEnv));
  // The Gateway API's mesh routes (GAMMA) route sidecars and proxyless clients as VirtualServices do.
  const gatewayApi = await loadGatewayApi(store, { domainSuffix: options.domainSuffix });
  const meshRoutes = gatewayApi.virtualServices.filter((vs) =>
    (vs.spec as { gateways?: string[] }).gateways?.includes("mesh"),
  );
  const routing = await loadRoutingConfigs(store, options.domainSuffix, mesh, meshRoutes);
  const security = kept?.security ?? (await loadSecurityPolicies(store, mesh.rootNamespace));
  return {
    mesh,
    routing,
    security,
    gatewayApi,
    visibility: createVisibility(store, mesh.discoverySelectors),
  };
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
        services = await withShards(store, parts.visibility, services, update.shards);
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
  return new Context(
    store,
    version,
    options,
    parts,
    externalHosts ?? hostsReader(store, parts.routing),
    derivation,
  );
}

/**
 * The ServiceEntry hosts read on first ask, once (a failed read is not kept). A closure of its own,
 * not of a context: a later context that keeps it (an EDS-only push) keeps no earlier context alive.
 */
function hostsReader(
  store: Store,
  routing: RoutingConfigs | undefined,
): () => Promise<ExternalHosts | undefined> {
  let hosts: Promise<ExternalHosts | undefined> | undefined;
  return () => {
    if (!hosts) {
      const read = routing ? loadExternalHosts(store) : Promise.resolve(undefined);
      hosts = read;
      read.catch(() => {
        if (hosts === read) hosts = undefined;
      });
    }
    return hosts;
  };
}

/**
 * A context: a class, its state in private fields, so that every context shares one shape (an object
 * literal with a getter gets a hidden class of its own each time, and a flush makes one per push).
 */
class Context implements PushContext {
  readonly version: number;
  readonly options: PushContextOptions;
  readonly mesh: EffectiveMesh;
  readonly routing: RoutingConfigs | undefined;
  readonly sidecars: readonly SidecarModel[];
  readonly table: ViewTable;
  readonly visibility: Visibility;
  readonly security: SecurityPolicies;
  readonly gatewayApi: GatewayApiTranslation;
  readonly externalHosts: () => Promise<ExternalHosts | undefined>;
  readonly #store: Store;
  #gateways: Promise<GatewayConfigs> | undefined;
  #derive: (() => Promise<PushServices>) | undefined;
  #services: Promise<PushServices> | undefined;

  constructor(
    store: Store,
    version: number,
    options: PushContextOptions,
    parts: PushContextParts,
    externalHosts: () => Promise<ExternalHosts | undefined>,
    derive: (() => Promise<PushServices>) | undefined,
  ) {
    this.version = version;
    this.options = options;
    this.mesh = parts.mesh;
    this.routing = parts.routing;
    this.sidecars = parts.sidecars;
    this.table = parts.table;
    this.visibility = parts.visibility;
    this.security = parts.security;
    this.gatewayApi = parts.gatewayApi;
    this.externalHosts = externalHosts;
    this.#store = store;
    this.#derive = derive;
    Object.freeze(this);
  }

  services(): Promise<PushServices> {
    if (!this.#services) {
      pending.delete(this);
      const derive = this.#derive;
      const read = derive ? derive() : readAll(this.#store, this.visibility);
      this.#services = read;
      read.then(
        // Derived and held: the last push's context is no longer needed (a chain of them would stay alive).
        () => {
          if (this.#services === read) this.#derive = undefined;
        },
        // A failed read is not kept: the next ask reads every service again.
        () => {
          if (this.#services !== read) return;
          this.#services = undefined;
          this.#derive = undefined;
        },
      );
    }
    return this.#services;
  }

  gateways(): Promise<GatewayConfigs> {
    if (!this.#gateways) {
      const read = loadGatewayConfigs(this.#store, this.options.domainSuffix, this.mesh, this.gatewayApi);
      this.#gateways = read;
      // A failed read is not kept: the next ask reads them again.
      read.catch(() => {
        if (this.#gateways === read) this.#gateways = undefined;
      });
    }
    return this.#gateways;
  }

  get servicesRead(): boolean {
    return this.#services !== undefined || this.#derive !== undefined;
  }
}

/** Every stored Sidecar (one copy per namespace/name, whatever cluster sent it), oldest first. */
export function readSidecars(store: Store): Promise<SidecarModel[]> {
  return readConfigModels(store, "Sidecar", toSidecar);
}
