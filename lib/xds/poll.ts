/**
 * Stateless delta xDS: one DeltaDiscoveryResponse computed from the store alone, from what the
 * client says it subscribes to and holds. The diff itself is delta-diff.ts's, the one the Delta
 * ADS session uses, so a poll and a stream never disagree about what a client needs.
 */
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  ResourceSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../resources/types.ts";
import { createVersionMap } from "../resources/version.ts";
import { defaultMaxResponseBytes, planDeltaPieces } from "./budget.ts";
import { diffForClient } from "./delta-diff.ts";
import { defaultAdsLimits } from "./delta-limits.ts";
import { type PollQuery, type PollRequestLike, readPollRequest } from "./poll-request.ts";
import type { ResourceSource } from "./source.ts";

/** What one client has been told: the versions it holds and the subscribed names it knows are absent. */
export interface ClientView {
  held: ReadonlyMap<string, string>;
  absent: ReadonlySet<string>;
}

/** One delta relative to a ClientView, and the view after the client applies it. */
export interface DeltaStep {
  /** The first of `responses`: what a unary Poll answers. */
  response: DeltaDiscoveryResponse;
  /**
   * The delta as responses under the byte budget (budget.ts planDeltaPieces): resources first,
   * removals with or after the last; each one's system_version_info is what the client holds
   * once it applied it and those before it. One response unless the delta is over the budget.
   */
  responses: DeltaDiscoveryResponse[];
  /** The view once every one of `responses` is applied. */
  view: ClientView;
  /**
   * A resource to send or a held name removed: news. Subscribed names reported absent (for the
   * first time in this view) are in removed_resources but are not news by themselves (poll-serve.ts).
   */
  changed: boolean;
}

/** The view a poll starts from: what initial_resource_versions says, nothing known absent. */
export function initialView(query: Pick<PollQuery, "held">): ClientView {
  return { held: query.held, absent: new Set() };
}

/**
 * The delta that brings `view` up to date: resources the client lacks at their current version,
 * and in removed_resources held names that are gone plus subscribed names not yet reported absent.
 * system_version_info is the set version (version.ts) of what the client holds afterwards, so
 * the same holdings give the same string on every runtime (and equal SotW's version_info).
 * Not `synced` (start-up, sync-gate.ts): held names that are gone are neither removed nor news;
 * they stay in the view, so the first step after sync removes them; a subscribed name that does
 * not exist is not reported absent either (not loaded yet, maybe) until the first step after sync.
 * `budget` (EDGEPILOT_MAX_RESPONSE_BYTES) cuts the delta into several responses (`responses`).
 */
export async function deltaStep(
  source: ResourceSource,
  query: Pick<PollQuery, "typeUrl" | "sub">,
  view: ClientView,
  synced = true,
  budget = defaultMaxResponseBytes,
): Promise<DeltaStep> {
  const { typeUrl, sub } = query;
  const found = await diffForClient(source, typeUrl, sub, view.held);
  const diff = synced ? found : { ...found, removed: [], missing: [] };
  const newlyAbsent = diff.missing.filter((n) => !view.absent.has(n));
  const held = new Map(view.held);
  for (const name of diff.removed) held.delete(name);
  for (const r of diff.resources) held.set(r.name, r.version);
  const absent = new Set(view.absent);
  for (const name of newlyAbsent) absent.add(name);
  for (const name of diff.removed) if (sub.names.has(name)) absent.add(name);
  for (const r of diff.resources) absent.delete(r.name);
  const removed = [...new Set([...diff.removed, ...newlyAbsent])].sort();
  // What the client holds in reach, piece after piece: its set version is updated per piece, not rehashed.
  const inReach = ([name]: readonly [string, string]) => sub.wildcard || sub.names.has(name);
  const holds = createVersionMap([...view.held].filter(inReach));
  const responses: DeltaDiscoveryResponse[] = [];
  for (const piece of planDeltaPieces(diff.resources, removed, budget)) {
    for (const r of piece.resources) holds.set(r.name, r.version);
    for (const name of piece.removed) holds.delete(name);
    responses.push(
      create(DeltaDiscoveryResponseSchema, {
        systemVersionInfo: await holds.version(),
        typeUrl,
        resources: piece.resources.map(toResource),
        removedResources: piece.removed,
      }),
    );
  }
  return {
    response: responses[0] as DeltaDiscoveryResponse,
    responses,
    view: { held, absent },
    changed: diff.resources.length > 0 || diff.removed.length > 0,
  };
}

/** Poll's answer, or `invalid` with a message naming the field (as fetch.ts's FetchResult). */
export type PollResult =
  | { kind: "ok"; response: DeltaDiscoveryResponse }
  | { kind: "invalid"; message: string };

/**
 * Poll's answer, now (`wait` is poll-serve.ts's business): the delta from what the request holds,
 * with every subscribed name that does not exist in removed_resources. The nonce is empty: there
 * is no stream to ACK on. A bad request is `invalid` with a message naming the field.
 * A delta over `budget` is answered by its first piece only (resources, no removals: make before
 * break); the client's next poll, holding what it got, is answered the rest.
 */
export async function pollDelta(
  source: ResourceSource,
  input: PollRequestLike,
  maxNames: number = defaultAdsLimits.maxNamesPerRequest,
  synced = true,
  budget = defaultMaxResponseBytes,
): Promise<PollResult> {
  const read = readPollRequest(input, maxNames);
  if (!read.ok) return { kind: "invalid", message: read.message };
  const step = await deltaStep(source, read.query, initialView(read.query), synced, budget);
  return { kind: "ok", response: step.response };
}

/** A stored resource as a delta Resource: name, content-hash version, the bytes as an Any. */
export function toResource(r: StoredResource) {
  return create(ResourceSchema, {
    name: r.name,
    version: r.version,
    resource: create(AnySchema, { typeUrl: r.typeUrl, value: r.body }),
  });
}
