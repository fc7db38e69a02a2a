/**
 * Planning one chunk of a flush: read what each service needs (one getMany for the whole chunk's
 * endpoint shards and generated records), generate, encode each resource once and hash those
 * bytes once, and keep only what differs from what the service published last time.
 */

import type { RouteConfiguration } from "../gen/envoy/config/route/v3/route_pb.ts";
import type { Service } from "../model/index.ts";
import type { Pace } from "../pace.ts";
import { servingServices } from "../registry/istio/external-services.ts";
import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import { destinationHosts } from "../resources/destination-hosts.ts";
import { danglingDestinations } from "../resources/generators/route-vs.ts";
import type { RoutingConfigs } from "../resources/istio-configs.ts";
import { packBodies } from "../resources/packed-bodies.ts";
import type { GenerateContext, Generator, ServiceView, StoredResource } from "../resources/types.ts";
import { toStored } from "../resources/version.ts";
import type { TypeUrl } from "../resources/xds-types.ts";
import { TypeUrl as T } from "../resources/xds-types.ts";
import type { EndpointShardsStored } from "../shards/shard-pieces.ts";
import { assembleShards } from "../shards/shard-store.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import { checkConsistent, type DanglingRoute, findDanglingRoutes, type NamesByType } from "./consistency.ts";
import { type EndpointsHeard, endpointsUnheard } from "./held-endpoints.ts";
import { type PodsPending, podsAwaited } from "./held-pods.ts";
import type { ServiceRef } from "./scope.ts";

/**
 * What a service generated last time (under keys.generated()): per type URL, its resource names
 * and their versions, in generation order. Two lists, not a name ─▶ version object: every service
 * has names no other has, and objects keyed by them cost a new hidden class each, to build and
 * again to copy in and out of the store.
 */
export type GeneratedRecord = Record<string, GeneratedList>;

/** `names[i]` was published at `versions[i]`. */
export interface GeneratedList {
  names: string[];
  versions: string[];
}

/** What publishing one service changes, and what it generated (its next GeneratedRecord). */
export interface ServicePlan {
  ref: ServiceRef;
  /** Resources whose version differs from the service's last record, encoded once. */
  upserts: StoredResource[];
  removals: { typeUrl: TypeUrl; name: string }[];
  record: GeneratedRecord;
  /** Whether `record` differs from what the store holds (else publishing leaves the record alone). */
  recordChanged: boolean;
  /** Consistency problems (see consistency.ts), as sentences; the chunk is refused if any. */
  problems: string[];
  /**
   * Routes naming a cluster nobody publishes: answered UNAVAILABLE at once (with a reason), or
   * another host's cluster named as it is (the flush checks the store holds it). Logged.
   */
  dangling: DanglingRoute[];
  /** What the service was generated from (the public view), for the per-namespace views (views.ts). */
  view: ServiceView;
  /** Every stored record of the service, before discovery selectors (the push context keeps them). */
  records: readonly Service[];
  /**
   * No assignment was generated, upserted or removed; its record keeps the last ones. "endpoints":
   * before sync, the service's endpoints were not heard yet (held-endpoints.ts); "pods": endpoints
   * of it wait for a pod whose cluster's Pod resync has not arrived (held-pods.ts).
   */
  endpointsHeld?: "endpoints" | "pods";
}

/** What planning needs from the flush. */
export interface PlanDeps {
  store: Store;
  generators: readonly Generator[];
  context: GenerateContext;
  /** The view as the discovery selectors let it be served. */
  filterView: (view: ServiceView) => Promise<ServiceView>;
  /** The flush's VirtualServices and DestinationRules (read once per flush); absent: none. */
  routing?: RoutingConfigs;
  /** The ServiceEntry registry's hosts (read once per flush with routing), to judge routes to them. */
  externalHosts?: ExternalHosts;
  /** Given only before the registry is synced: services whose endpoints were not heard are held (held-endpoints.ts). */
  endpointsHeard?: EndpointsHeard;
  /** Given only while a cluster's Pod resync is awaited: services with endpoints waiting for pods are held (held-pods.ts). */
  podsPending?: PodsPending;
  /** The push's PeerAuthentications when there are any (proxyless auto-mTLS reads them: ServiceView.peerMtls). */
  peerMtls?: ServiceView["peerMtls"];
  /** Awaited after each service is planned (the flush's pace: yields once a slice is used up). */
  pace?: Pace;
}

/**
 * Plans `refs` (one chunk): a full push runs every generator, an incremental one only EDS. The
 * chunk's shards and generated records come in one getMany; each service's records in one list.
 * Between services it awaits `deps.pace`, so a chunk of large services never holds the event loop whole.
 */
export async function planChunk(
  deps: PlanDeps,
  refs: readonly ServiceRef[],
  full: boolean,
): Promise<ServicePlan[]> {
  const { store } = deps;
  const wanted: string[] = [];
  for (const { namespace, hostname } of refs) {
    wanted.push(keys.shards(namespace, hostname), keys.generated(namespace, hostname));
  }
  const read = await store.getMany<unknown>(wanted);
  // Records kept in pieces (lib/shards/shard-store.ts): every piece of the chunk in one more getMany.
  const records = await assembleShards(
    store,
    refs.map((_, i) => read.get(wanted[2 * i] as string)?.value as EndpointShardsStored | undefined),
  );
  const plans: ServicePlan[] = [];
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i] as ServiceRef;
    const { namespace, hostname } = ref;
    const services =
      ref.services ??
      (await listAll<Service>(store, keys.servicePrefix(namespace, hostname))).map((e) => e.value);
    const shards = records[i];
    const previous = readGeneratedRecord(read.get(wanted[2 * i + 1] as string)?.value);
    const routing = deps.routing?.forService(namespace, hostname);
    const destinationPorts =
      routing?.virtualService && (await deps.routing?.destinationPorts(routing.virtualService, hostname));
    const destinations =
      routing?.virtualService &&
      deps.routing &&
      destinationHosts(
        deps.routing,
        routing.virtualService,
        hostname,
        destinationPorts ?? {},
        deps.context.domainSuffix,
        deps.externalHosts,
      );
    const visible = await deps.filterView({
      hostname,
      namespace,
      services,
      shards,
      ...(deps.peerMtls && { peerMtls: deps.peerMtls }),
      ...routing,
      ...(destinationPorts && Object.keys(destinationPorts).length > 0 && { destinationPorts }),
      ...(destinations && Object.keys(destinations).length > 0 && { destinationHosts: destinations }),
    });
    // A host both registries declare is generated from one of them (Kubernetes first, as Istio).
    const served = servingServices(visible.services);
    const view = served === visible.services ? visible : { ...visible, services: [...served] };
    const held =
      deps.endpointsHeard !== undefined && endpointsUnheard(view, deps.endpointsHeard)
        ? "endpoints"
        : deps.podsPending !== undefined && (await podsAwaited(store, view, deps.podsPending))
          ? "pods"
          : undefined;
    const plan = await planService(deps, ref, view, services, previous.record, full, held);
    plan.recordChanged ||= previous.olderLayout;
    plans.push(plan);
    if (deps.pace) await deps.pace();
  }
  return plans;
}

async function planService(
  deps: PlanDeps,
  ref: ServiceRef,
  view: ServiceView,
  records: readonly Service[],
  previous: GeneratedRecord,
  full: boolean,
  held: ServicePlan["endpointsHeld"],
): Promise<ServicePlan> {
  const service = `${ref.namespace}/${ref.hostname}`;
  const record: GeneratedRecord = { ...previous };
  const plan: ServicePlan = {
    ref,
    upserts: [],
    removals: [],
    record,
    recordChanged: false,
    problems: [],
    dangling: [],
    view,
    records,
    ...(held && { endpointsHeld: held }),
  };
  const generatedNames: NamesByType = new Map();
  let routes: RouteConfiguration[] = [];
  for (const generator of deps.generators) {
    if (!full && generator.typeUrl !== T.endpoint) continue;
    // Held: the record keeps the last assignments, and the consistency check skips EDS (absent).
    if (held && generator.typeUrl === T.endpoint) continue;
    const generated = generator.generate(view, deps.context);
    if (generator.typeUrl === T.route && view.virtualService)
      routes = generated.map((g) => g.message as RouteConfiguration);
    const made = generated.map((g) => toStored(g, service));
    const stored = made.some((s) => s instanceof Promise)
      ? await Promise.all(made)
      : (made as StoredResource[]);
    const was = previous[generator.typeUrl];
    // Lists of their exact length (map; push would reserve room for 17): the store keeps them.
    const now: GeneratedList = { names: stored.map((s) => s.name), versions: stored.map((s) => s.version) };
    for (let i = 0; i < stored.length; i++) {
      const s = stored[i] as StoredResource;
      if (was === undefined || versionOf(was, s.name, i) !== s.version) plan.upserts.push(s);
    }
    if (was !== undefined)
      for (const name of was.names) {
        if (!now.names.includes(name)) plan.removals.push({ typeUrl: generator.typeUrl, name });
      }
    generatedNames.set(generator.typeUrl, now.names);
    if (now.names.length > 0) record[generator.typeUrl] = now;
    else delete record[generator.typeUrl];
  }
  plan.problems = checkConsistent(service, generatedNames);
  if (full && view.virtualService) {
    const answered = danglingDestinations(view).map((d) => ({ service, ...d }));
    plan.dangling = [
      ...answered,
      ...findDanglingRoutes(service, ref.hostname, routes, generatedNames.get(T.cluster) ?? []),
    ];
  }
  // Same names at the same versions (in any order) when nothing is upserted or removed.
  plan.recordChanged = plan.upserts.length > 0 || plan.removals.length > 0;
  // What the store keeps of this push: the small bodies in one buffer, not one each.
  plan.upserts = packBodies(plan.upserts);
  return plan;
}

/** The version `list` gives `name`, looked for at `hint` first (names keep their order). */
function versionOf(list: GeneratedList, name: string, hint: number): string | undefined {
  const at = list.names[hint] === name ? hint : list.names.indexOf(name);
  return at < 0 ? undefined : list.versions[at];
}

/**
 * A stored GeneratedRecord, also in the layout flushes before this one wrote (per type URL an
 * object name ─▶ version), so a store written by an older version is read, not misread;
 * `olderLayout` says it must be written again.
 */
function readGeneratedRecord(value: unknown): { record: GeneratedRecord; olderLayout: boolean } {
  const record: GeneratedRecord = {};
  let olderLayout = false;
  if (typeof value !== "object" || value === null) return { record, olderLayout };
  for (const [typeUrl, list] of Object.entries(value as Record<string, unknown>)) {
    const l = list as Partial<GeneratedList> | Record<string, string>;
    if (Array.isArray(l.names) && Array.isArray(l.versions)) {
      record[typeUrl] = l as GeneratedList;
    } else {
      const pairs = Object.entries(l as Record<string, string>);
      record[typeUrl] = { names: pairs.map(([n]) => n), versions: pairs.map(([, v]) => v) };
      olderLayout = true;
    }
  }
  return { record, olderLayout };
}
