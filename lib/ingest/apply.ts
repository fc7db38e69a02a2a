/**
 * Applies validated watch events in order, each through its kind's handler, skipping replayed
 * and older events by resourceVersion, and queues the one merged push the batch needs.
 * Mutations return the push they need (Istio's edsUpdate); nothing here pushes by itself.
 */
import { serviceHostname } from "../model/index.ts";
import type { Pace } from "../pace.ts";
import { enqueuePush } from "../push/queue.ts";
import type { Problem } from "../registry/check.ts";
import { keys, type Store } from "../store/index.ts";
import { type BatchPushes, createBatchPushes } from "./batch-pushes.ts";
import type { IngestContext, Outcome, RegistryOptions } from "./context.ts";
import { danglingOfBatch, routingChanges } from "./dangling.ts";
import { createDeferredSlices, deferredKinds } from "./deferred-slices.ts";
import type { KubeObject, WatchEvent } from "./events.ts";
import { kindHandlers } from "./kinds/index.ts";
import { isNewer, type ObjectRecord } from "./objects.ts";
import { clearRejected, noteRejected, type Rejection } from "./rejected.ts";

export interface ApplyDeps {
  store: Store;
  now: () => number;
  registry: RegistryOptions;
  /** Awaited between events, so a large batch yields to the event loop (lib/pace.ts). */
  pace?: Pace;
}

/** What a batch did, returned to the caller as the ingest answer. */
export interface ApplySummary {
  cluster: string;
  events: number;
  applied: number;
  /** Objects whose content did not change what is served. */
  unchanged: number;
  /** Replayed or older events, skipped by resourceVersion. */
  stale: number;
  /** Events of kinds not converted, or not in use (e.g. v1 Endpoints in EndpointSlice mode), by kind. */
  ignored: Record<string, number>;
  bookmarks: number;
  /** Objects a resync found gone and deleted. */
  deleted?: number;
  /**
   * A resync's items as informer events (istiod counts its informers' list as events): new objects
   * applied (add), known ones changed (update), and objects found gone (delete).
   */
  listed?: { add: number; update: number; delete: number };
  /**
   * Field paths the batch's configs set that are accepted but not implemented, each once, sorted:
   * `<kind> <namespace>/<name>: <path>` (e.g. `VirtualService default/reviews: spec.http[0].mirror`).
   */
  unsupported: string[];
  /**
   * Route destinations of the batch's VirtualServices (and of those routing to a host whose
   * DestinationRule it changed) naming a host, port or subset nobody defines, sorted:
   * `VirtualService <ns>/<name>: spec.http[<i>]: <host>[ subset <s>][ port <p>]: <reason>`.
   * Accepted (Istio does); calls on them fail UNAVAILABLE.
   */
  dangling: string[];
  /**
   * Objects skipped because their kind's rules refuse them (lib/ingest/rejected.ts); the rest of the
   * batch applied, and each one's last valid version stays served.
   */
  rejected: Rejection[];
  /** The push queued for this batch, if any. */
  push: { full: boolean; configs: number | "all" } | null;
}

export interface ApplyOptions {
  /**
   * Order events by resourceVersion (watch events). Admission requests carry the version the
   * object had before the change, so they are applied as they come and recorded by nobody.
   */
  trackVersions: boolean;
  /** Told what was recorded of the object before it applied (a resync counts new objects apart). */
  recorded?: (record: ObjectRecord | undefined) => void;
}

/** Starts a summary for a batch of `events` events. */
export function emptySummary(cluster: string, events: number): ApplySummary {
  return {
    cluster,
    events,
    applied: 0,
    unchanged: 0,
    stale: 0,
    ignored: {},
    bookmarks: 0,
    unsupported: [],
    dangling: [],
    rejected: [],
    push: null,
  };
}

/** Builds the handlers' context for one call. */
export function ingestContext(deps: ApplyDeps, cluster: string): IngestContext {
  return {
    ...deps,
    cluster,
    shard: { provider: "Kubernetes", cluster },
    unsupported: new Set(),
    routing: routingChanges(),
  };
}

/** Applies every event for `cluster`, then queues one merged push. */
export async function applyEvents(
  deps: ApplyDeps,
  cluster: string,
  events: readonly WatchEvent[],
  options: ApplyOptions = { trackVersions: true },
): Promise<ApplySummary> {
  const slices = createDeferredSlices();
  const ctx = { ...ingestContext(deps, cluster), slices };
  const summary = emptySummary(cluster, events.length);
  const pushes = createBatchPushes();
  const flushSlices = async () => {
    const push = slices.pending === 0 ? undefined : await slices.flush(ctx);
    if (push) pushes.add(push);
  };
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as WatchEvent;
    await deps.pace?.();
    if (event.type === "BOOKMARK") {
      summary.bookmarks++;
      continue;
    }
    const screened = screen(ctx, event);
    if (screened.type === "REJECTED") {
      const r = await noteRejected(ctx, screened, index, options.trackVersions);
      if (r === "stale") summary.stale++;
      else summary.rejected.push(r);
      continue;
    }
    // A Service reads and writes its own service's pieces and shard: it finds that service's noted
    // changes applied. Other kinds read any shard or piece: they find every noted change applied.
    if (event.object.kind === "Service") {
      const { name, namespace = "" } = event.object.metadata;
      const hostname = serviceHostname(name, namespace, deps.registry.domainSuffix);
      const push = await slices.flushService(ctx, { namespace, hostname });
      if (push) pushes.add(push);
    } else if (!deferredKinds.has(event.object.kind)) await flushSlices();
    const deleted = event.type === "DELETED";
    const body = deleted && event.unreadBody ? "identity" : "whole";
    count(summary, pushes, event.object.kind, await applyEvent(ctx, deleted, event.object, options, body));
  }
  await flushSlices();
  await noteConfigs(summary, ctx, pushes);
  await queuePush(deps, summary, pushes);
  return summary;
}

/**
 * Copies what the handlers noted as accepted but not implemented into the summary, sorted, and
 * the dangling route destinations of the batch's routing configs and of the routes to the services
 * its full `pushes` name (dangling.ts).
 */
export async function noteConfigs(
  summary: ApplySummary,
  ctx: IngestContext,
  pushes?: BatchPushes,
): Promise<void> {
  summary.unsupported = [...(ctx.unsupported ?? [])].sort();
  summary.dangling = await danglingOfBatch(ctx, pushes?.serviceHosts);
}

/** The event, or the REJECTED event it becomes when its kind's handler refuses the object (KindHandler.refuse). */
export function screen(ctx: IngestContext, event: WatchEvent): WatchEvent {
  if (event.type !== "ADDED" && event.type !== "MODIFIED") return event;
  const refused = refusal(ctx, event.object);
  return refused ? { type: "REJECTED", object: event.object, ...refused } : event;
}

/** Why the object's kind handler refuses it in this context, if it does (KindHandler.refuse). */
export function refusal(ctx: IngestContext, obj: KubeObject): Problem | undefined {
  return kindHandlers[obj.kind]?.refuse?.(ctx, obj);
}

/** Tallies one outcome into the summary and the batch's pushes. */
export function count(
  summary: ApplySummary,
  pushes: BatchPushes,
  kind: string,
  outcome: Outcome | "stale",
): void {
  if (outcome === "stale") summary.stale++;
  else if (outcome.kind === "ignored") summary.ignored[kind] = (summary.ignored[kind] ?? 0) + 1;
  else if (outcome.kind === "unchanged") summary.unchanged++;
  else {
    summary.applied++;
    if (outcome.push) pushes.add(outcome.push);
  }
}

/** Queues the merged push of a batch and notes it in the summary. */
export async function queuePush(deps: ApplyDeps, summary: ApplySummary, pushes: BatchPushes): Promise<void> {
  const merged = pushes.merged();
  if (!merged) return;
  await enqueuePush(deps.store, merged, deps.now());
  summary.push = { full: merged.full, configs: merged.configsUpdated?.length ?? "all" };
}

/**
 * Applies one object through its handler, with resourceVersion ordering when asked; `body`
 * "identity": only the object's identity is read (a delete whose last state its kind refuses).
 */
export async function applyEvent(
  ctx: IngestContext,
  deleted: boolean,
  obj: KubeObject,
  options: ApplyOptions,
  body: "whole" | "identity" = "whole",
): Promise<Outcome | "stale"> {
  const handler = kindHandlers[obj.kind];
  if (!handler) return { kind: "ignored", reason: `kind ${obj.kind} is not converted` };
  const ref = {
    cluster: ctx.cluster,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? "",
    name: obj.metadata.name,
  };
  // The object's key, built once for its read and its write.
  const key = keys.object(ref.cluster, ref.kind, ref.namespace, ref.name);
  const recorded = (await ctx.store.get<ObjectRecord>(key))?.value;
  const resourceVersion = obj.metadata.resourceVersion ?? "";
  if (options.trackVersions && recorded && !isNewer(recorded, resourceVersion)) return "stale";
  options.recorded?.(recorded);
  // A deleted object whose last state its kind's rules refuse is undone from what was recorded alone.
  const outcome = deleted
    ? await handler.remove(ctx, ref, recorded, body === "whole" ? obj : undefined)
    : await handler.apply(ctx, obj, recorded);
  if (options.trackVersions && outcome.kind !== "ignored") {
    const data = (outcome.kind === "applied" && outcome.data) || recorded?.data;
    const record: ObjectRecord = data
      ? { resourceVersion, uid: obj.metadata.uid ?? "", deleted, data }
      : { resourceVersion, uid: obj.metadata.uid ?? "", deleted };
    await ctx.store.put(key, record);
    if (recorded?.rejected) await clearRejected(ctx, ref.kind, ref.namespace, ref.name);
  }
  return outcome;
}
