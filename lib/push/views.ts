/**
 * Per-namespace views at flush time. The shared resources stay the public view; what a namespace
 * sees differently is recorded once per view, never per proxy: the Sidecars that scope it, the
 * VirtualServices a Sidecar may import (for the services they route to) and the services not
 * exported to it (a predicate the streams apply, lib/resources/view-table.ts), and, for the view
 * candidates of a service (per host: the namespaces a non-public VirtualService or DestinationRule
 * of it reaches, those with a DestinationRule for it, and the namespaces with a Sidecar of their
 * own that may see it), the resources whose content differs, stored as overlays under
 * keys.viewResource() and generated only for the services a push touches. Everything is kept in
 * one ViewTable, stored in bounded parts (lib/resources/view-store.ts) and written only where it changed.
 * A mesh without such config reads the head and lists an empty prefix per flush, and writes nothing.
 */

import type { PushRequest, Service } from "../model/index.ts";
import type { ExternalHosts } from "../registry/istio/route-destinations.ts";
import { type SidecarModel, sidecarFor } from "../registry/istio/sidecar.ts";
import { defaultMesh, type EffectiveMesh } from "../registry/mesh/effective-mesh.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { destinationHosts } from "../resources/destination-hosts.ts";
import type { RoutingConfigs } from "../resources/istio-configs.ts";
import { readSidecars } from "../resources/push-context.ts";
import type { GenerateContext, Generator, ServiceView, StoredResource } from "../resources/types.ts";
import { toStored } from "../resources/version.ts";
import { loadViewTable, saveViewTable } from "../resources/view-store.ts";
import {
  emptyViewTable,
  type OverlayList,
  type OverlayRecord,
  resolveView,
  routedToChanged,
  type ViewTable,
} from "../resources/view-table.ts";
import type { TypeUrl } from "../resources/xds-types.ts";
import { TypeUrl as T } from "../resources/xds-types.ts";
import { sameJson } from "../same-json.ts";
import { keys, listAll, type Store } from "../store/index.ts";
import type { ServicePlan } from "./plan.ts";
import type { ServiceRef } from "./scope.ts";
import { widenForViews } from "./view-scope.ts";

/** What the views need from the flush. */
export interface ViewDeps {
  store: Store;
  generators: readonly Generator[];
  context: GenerateContext;
  routing?: RoutingConfigs;
  /** The ServiceEntry hosts, on full pushes with routing: overlays judge their routes' destinations too. */
  externalHosts?: ExternalHosts;
  /** Where the one-time move of a table stored whole by an older version is logged. */
  log?: (line: string) => void;
  /** Every stored Sidecar as the last push context holds them (an EDS-only push); absent: read. */
  sidecars?: readonly SidecarModel[];
  /** The push's mesh settings: the root namespace and services' default exportTo. Default: Istio's. */
  mesh?: Pick<EffectiveMesh, "rootNamespace" | "defaultServiceExportTo">;
  /** The push changed the mesh settings: every view is marked (its root namespace may have moved). */
  meshChanged?: boolean;
}

/** The views of one flush: overlays per published chunk, then the table and its markers. */
export interface ViewPublisher {
  /** Plans and publishes the overlays of a chunk just published; each change names its view. */
  publishChunk(plans: readonly ServicePlan[], full: boolean): Promise<ResourceChange[]>;
  /**
   * Writes the table when it changed. Returns a marker (a change with `name` "") per view whose
   * visible names changed (`*` when a Sidecar or a service's exportTo did: any namespace may be hit).
   */
  finish(): Promise<ResourceChange[]>;
  /** Sentences for the flush's log (Sidecars left out). */
  notApplied: string[];
  /** `refs` and the services the views must re-judge for `request` (lib/push/view-scope.ts). */
  widen(request: PushRequest, refs: ServiceRef[]): Promise<ServiceRef[]>;
  /** Every stored Sidecar, workloadSelector ones too (readSidecars), as this flush read them. */
  readonly allSidecars: readonly SidecarModel[];
  /** The table as finish() left it (the push context's). Only after finish(). */
  table(): ViewTable;
}

/** Reads the previous table and the Sidecars once per flush. */
export async function loadViews(deps: ViewDeps): Promise<ViewPublisher> {
  const { store } = deps;
  const { rootNamespace, defaultServiceExportTo } = deps.mesh ?? defaultMesh;
  const setExport = (exports: Record<string, string[]>, svc: string, services: readonly Service[]) =>
    recordExport(exports, svc, services, defaultServiceExportTo);
  const loaded = await loadViewTable(store, deps.log);
  const prev = loaded?.table;
  const allSidecars = deps.sidecars ?? (await readSidecars(store));
  const { sidecars, notApplied } = scopingSidecars(allSidecars);
  const exports: Record<string, string[]> = { ...(prev?.exports ?? {}) };
  // A store that never had a table (a first flush, or one written before views): read every
  // service once to learn their exportTo; afterwards each push updates the services it touches.
  if (!prev) {
    const bySvc = new Map<string, Service[]>();
    for (const e of await listAll<Service>(store, keys.services())) {
      const id = `${e.value.namespace}/${e.value.hostname}`;
      bySvc.set(id, [...(bySvc.get(id) ?? []), e.value]);
    }
    for (const [id, services] of bySvc) setExport(exports, id, services);
  }
  const overlays: ViewTable["overlays"] = { ...(prev?.overlays ?? {}) };
  const reshaped = new Set<string>();
  // Kept only while a Sidecar may import them: a mesh without Sidecars records none.
  const imports = sidecars.length > 0 ? (deps.routing?.imports() ?? []) : [];
  // Namespaces with a Sidecar of their own: a VirtualService it does not import may be an overlay there.
  const scoped = [...new Set(sidecars.map((s) => s.namespace))].sort();
  const scopedBy = new Map<string, SidecarModel | undefined>();
  const sidecarOf = (view: string) => {
    if (!scopedBy.has(view)) scopedBy.set(view, sidecarFor(sidecars, view, rootNamespace));
    return scopedBy.get(view);
  };

  async function publishChunk(plans: readonly ServicePlan[], full: boolean): Promise<ResourceChange[]> {
    const changes: ResourceChange[] = [];
    for (const plan of plans)
      setExport(exports, `${plan.ref.namespace}/${plan.ref.hostname}`, plan.view.services);
    // What each view may see once this chunk's exportTo is recorded (the predicate streams apply).
    const table: ViewTable = { sidecars, exports, overlays: {}, virtualServices: imports };
    const seen = new Map<string, (svc: string) => boolean>();
    const sees = (view: string, svc: string) => {
      let visible = seen.get(view);
      if (!visible) {
        const v = resolveView(table, view, rootNamespace).visible;
        visible = v ?? (() => true);
        seen.set(view, visible);
      }
      return visible(svc);
    };
    for (const plan of plans) {
      const { namespace, hostname } = plan.ref;
      const svc = `${namespace}/${hostname}`;
      const targets = new Set(deps.routing?.viewNamespacesFor(hostname) ?? []);
      if (deps.routing) for (const view of scoped) targets.add(view);
      for (const [view, bySvc] of Object.entries(overlays)) if (bySvc[svc]) targets.add(view);
      for (const view of [...targets].sort()) {
        const before = overlays[view]?.[svc];
        // A service the view may not see has no overlay there (the predicate hides its names).
        const after = sees(view, svc)
          ? await overlayOf(deps, plan, view, sidecarOf(view), before, full)
          : undefined;
        if (!before && !after) continue;
        if (!sameShape(before, after?.record)) reshaped.add(view);
        changes.push(...(await writeOverlay(store, view, before, after)));
        const bySvc = { ...(overlays[view] ?? {}) };
        if (after) bySvc[svc] = after.record;
        else delete bySvc[svc];
        if (Object.keys(bySvc).length > 0) overlays[view] = bySvc;
        else delete overlays[view];
      }
    }
    return changes;
  }

  let finished: ViewTable | undefined;
  async function finish(): Promise<ResourceChange[]> {
    const next: ViewTable = {
      sidecars,
      exports: sorted(exports),
      overlays: Object.fromEntries(
        Object.keys(overlays)
          .sort()
          .map((v) => [v, sorted(overlays[v] ?? {})]),
      ),
      ...(imports.length > 0 && { virtualServices: imports }),
    };
    const was = prev ?? emptyViewTable();
    finished = next;
    const remark = deps.meshChanged === true;
    if (prev && sameJson(prev, next) && !remark) return [];
    if (!prev || !sameJson(prev, next)) await saveViewTable(store, next, loaded?.head);
    const everyView =
      remark || !sameJson(was.sidecars, next.sidecars) || !sameJson(was.exports, next.exports);
    const marked = everyView ? ["*"] : [...reshaped, ...routedToChanged(was, next, rootNamespace)];
    return [...new Set(marked)]
      .sort()
      .map((view) => ({ typeUrl: T.listener, name: "", version: null, view }));
  }

  const widen = (request: PushRequest, refs: ServiceRef[]) =>
    widenForViews(
      {
        store,
        routing: deps.routing,
        table: prev,
        hasSidecars: sidecars.length > 0,
        domainSuffix: deps.context.domainSuffix,
      },
      request,
      refs,
    );
  return {
    publishChunk,
    finish,
    notApplied,
    widen,
    allSidecars,
    // A method, not a closure bound to a const: a loader that keeps function names (tsx) renames
    // every such closure once per flush.
    table() {
      if (!finished) throw new Error("views: the table is read before finish()");
      return finished;
    },
  };
}

/** The Sidecars that scope namespaces (first cluster's copy of each; without workloadSelector), oldest first. */
function scopingSidecars(all: readonly SidecarModel[]): { sidecars: SidecarModel[]; notApplied: string[] } {
  const sidecars: SidecarModel[] = [];
  const notApplied: string[] = [];
  for (const model of all) {
    if (model.workloadSelector !== undefined)
      notApplied.push(
        `Sidecar ${model.namespace}/${model.name}: not applied: workloadSelector (per-workload views are not built; Envoy sidecars whose labels match get it)`,
      );
    else {
      // Ingress listeners and the outbound traffic policy shape Envoy sidecars only: the table
      // (and so what a proxyless view may see) never changes with them.
      const { ingress: _ingress, outboundTrafficPolicy: _policy, ...scoping } = model;
      sidecars.push(scoping);
    }
  }
  return { sidecars, notApplied };
}

/**
 * Records the service's exportTo when it is not public (any cluster's record public: public); a
 * service without one takes the mesh's defaultServiceExportTo.
 */
function recordExport(
  exports: Record<string, string[]>,
  svc: string,
  services: readonly Service[],
  fallback: readonly string[],
): void {
  const lists = services.map((s) => (s.exportTo && s.exportTo.length > 0 ? s.exportTo : fallback));
  const restricted = lists.length > 0 && lists.every((e) => e.length > 0 && !e.includes("*"));
  if (restricted) exports[svc] = [...new Set(lists.flat())].sort();
  else delete exports[svc];
}

/** What `plan`'s service generates for proxies of `view` unlike the shared resources; undefined: nothing. */
async function overlayOf(
  deps: ViewDeps,
  plan: ServicePlan,
  view: string,
  sidecar: SidecarModel | undefined,
  before: OverlayRecord | undefined,
  full: boolean,
): Promise<{ record: OverlayRecord; resources: StoredResource[] } | undefined> {
  const { namespace, hostname } = plan.ref;
  const shared = plan.view;
  const routing = deps.routing?.forView(view, namespace, hostname, sidecar) ?? {};
  if (
    routing.virtualService === shared.virtualService &&
    sameJson(routing.destinationRule, shared.destinationRule)
  )
    return undefined;
  const vs = routing.virtualService;
  const destinationPorts = (vs && (await deps.routing?.destinationPorts(vs, hostname))) || {};
  const destinations =
    vs &&
    deps.routing &&
    destinationHosts(
      deps.routing,
      vs,
      hostname,
      destinationPorts,
      deps.context.domainSuffix,
      deps.externalHosts,
    );
  const input: ServiceView = {
    hostname,
    namespace,
    services: shared.services,
    shards: shared.shards,
    ...(shared.peerMtls && { peerMtls: shared.peerMtls }),
    ...routing,
    ...(Object.keys(destinationPorts).length > 0 && { destinationPorts }),
    ...(destinations && Object.keys(destinations).length > 0 && { destinationHosts: destinations }),
  };
  const service = `${namespace}/${hostname}`;
  const record: OverlayRecord = {};
  const resources: StoredResource[] = [];
  for (const generator of deps.generators) {
    const type = generator.typeUrl;
    if ((!full && type !== T.endpoint) || (type === T.endpoint && plan.endpointsHeld)) {
      const kept = before?.[type];
      if (kept) record[type] = kept;
      continue;
    }
    const stored = await Promise.all(
      generator.generate(input, deps.context).map((g) => toStored(g, service)),
    );
    const pub = plan.record[type] ?? { names: [], versions: [] };
    const list: OverlayList = { names: [], versions: [], hidden: [] };
    const mine = new Set<string>();
    for (const s of stored) {
      mine.add(s.name);
      const at = pub.names.indexOf(s.name);
      if (at >= 0 && pub.versions[at] === s.version) continue;
      list.names.push(s.name);
      list.versions.push(s.version);
      resources.push(s);
    }
    for (const n of pub.names) if (!mine.has(n)) list.hidden.push(n);
    if (list.names.length > 0 || list.hidden.length > 0) record[type] = list;
  }
  return Object.keys(record).length > 0 ? { record, resources } : undefined;
}

/** Puts what changed of one service's overlay in one view and deletes what it no longer has. */
async function writeOverlay(
  store: Store,
  view: string,
  before: OverlayRecord | undefined,
  after: { record: OverlayRecord; resources: StoredResource[] } | undefined,
): Promise<ResourceChange[]> {
  const changes: ResourceChange[] = [];
  const had = new Map<string, string>();
  for (const [type, list] of Object.entries(before ?? {}))
    for (let i = 0; i < list.names.length; i++)
      had.set(`${type}\n${list.names[i]}`, list.versions[i] as string);
  const has = new Set<string>();
  for (const r of after?.resources ?? []) {
    has.add(`${r.typeUrl}\n${r.name}`);
    if (had.get(`${r.typeUrl}\n${r.name}`) === r.version) continue;
    await store.put(keys.viewResource(view, r.typeUrl, r.name), r);
    const { typeUrl, name, version, body, service } = r;
    changes.push({ typeUrl, name, version, body, service, view });
  }
  // Names kept from the record without being regenerated (an EDS-only push) stay.
  for (const [type, list] of Object.entries(after?.record ?? {}))
    for (const n of list.names) has.add(`${type}\n${n}`);
  for (const id of had.keys()) {
    if (has.has(id)) continue;
    const [typeUrl, name] = id.split("\n") as [TypeUrl, string];
    await store.delete(keys.viewResource(view, typeUrl, name));
    changes.push({ typeUrl, name, version: null, view });
  }
  return changes;
}

/** Whether two overlay records name the same overlay and hidden names (versions aside). */
function sameShape(a: OverlayRecord | undefined, b: OverlayRecord | undefined): boolean {
  const shape = (r: OverlayRecord | undefined) =>
    Object.entries(r ?? {})
      .map(([t, l]) => `${t}:${[...l.names].sort().join(",")}:${[...l.hidden].sort().join(",")}`)
      .sort()
      .join("\n");
  return shape(a) === shape(b);
}

/** A record with its keys sorted, so equal tables serialize equally. */
function sorted<V>(o: Record<string, V>): Record<string, V> {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k] as V]),
  );
}
