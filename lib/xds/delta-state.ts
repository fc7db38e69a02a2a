/**
 * What a Delta session tracks per type URL, and the rules that change it: subscriptions (xDS
 * protocol, "How the client specifies what resources to return" and "Incremental xDS"), what the
 * client holds, and ACK/NACK by nonce. Plain data and synchronous functions; delta.ts does the I/O.
 */

import { createVersionMap, type VersionMap } from "../resources/version.ts";
import { takeFirst } from "../take-first.ts";
import { type Subscription, wildcardTypes } from "./subscription.ts";

/** One response sent and not yet ACKed or NACKed. */
export interface InFlight {
  nonce: string;
  /**
   * Every resource in the response (name and version; unique names): the response's own array, no
   * map built per response (one per stream per push).
   */
  resources: readonly Versioned[];
  removed: readonly string[];
}

/** A resource's name and version (a StoredResource is one). */
export interface Versioned {
  readonly name: string;
  readonly version: string;
}

/**
 * The state of one type URL on one Delta stream: the Subscription (subscription.ts; its `returned`
 * is what the client holds as far as the session knows: `held` with every response in flight
 * applied in order, kept up to date as responses go out and are answered, O(response), never
 * rebuilt), and what only Delta tracks. `ackedVersion` is the set version of `held` after the last
 * ACK (or of initial_resource_versions); a NACK's versionInfo the set version of what the client kept.
 */
export interface DeltaTypeState extends Subscription {
  /** What the client holds for sure: initial_resource_versions, then every ACKed response. */
  held: VersionMap;
  /** Responses sent and not answered yet, oldest first; counted as held until NACKed. */
  inflight: InFlight[];
  /** name ─▶ version the client NACKed: not resent until the resource changes. */
  rejected: Map<string, string>;
  /** Subscribed names already reported in removed_resources as not existing. */
  reportedMissing: Set<string>;
  /** Names whose state the next response must report (resource or removal) whatever the client holds. */
  resend: Set<string>;
  /**
   * False while `rejected`, `resend` and `reportedMissing` are known empty: set wherever a name goes
   * into one of them, cleared only by `unmarked` once it finds all three empty. The checks made on
   * every stream at every push and ACK read this field, not the three collections (six reads of
   * objects spread over the heap, per stream).
   */
  marked: boolean;
  /**
   * The subscription as one interned string (delta-shared.ts subscriptionKey; "" when too long to
   * share), built at a push and cleared whenever the subscription may have changed.
   */
  subKey?: string;
}

/** A fresh state for a type's first request. */
export function newTypeState(typeUrl: string, initial: Readonly<Record<string, string>>): DeltaTypeState {
  // One literal with every field (no spread of a shared part): the fields read per stream per push
  // and ACK stay in the object itself.
  return {
    typeUrl,
    wildcard: false,
    names: new Set(),
    returned: createVersionMap(Object.entries(initial)),
    held: createVersionMap(Object.entries(initial)),
    inflight: [],
    rejected: new Map(),
    reportedMissing: new Set(),
    resend: new Set(),
    marked: false,
  };
}

/**
 * Whether `rejected`, `resend` and `reportedMissing` are all empty; reads them only when a name
 * went into one since they were last found empty (see DeltaTypeState.marked).
 */
export function unmarked(state: DeltaTypeState): boolean {
  if (!state.marked) return true;
  if (state.rejected.size > 0 || state.resend.size > 0 || state.reportedMissing.size > 0) return false;
  state.marked = false;
  return true;
}

/** Records a response going out: it is in flight, and the client is taken to hold what it carries. */
export function sent(state: DeltaTypeState, flight: InFlight): void {
  state.inflight.push(flight);
  // Indexed loops: a class's frozen arrays, iterated by for-of, made an iterator result per item.
  const { resources, removed } = flight;
  for (let i = 0; i < resources.length; i++) {
    const r = resources[i] as Versioned;
    state.returned.set(r.name, r.version);
  }
  for (let i = 0; i < removed.length; i++) state.returned.delete(removed[i] as string);
}

/** Stops tracking `name`: the session no longer assumes anything about what the client has of it. */
function forget(state: DeltaTypeState, name: string): void {
  state.held.delete(name);
  state.returned.delete(name);
  state.rejected.delete(name);
  state.reportedMissing.delete(name);
  state.resend.delete(name);
  for (const f of state.inflight) {
    if (f.resources.some((r) => r.name === name)) f.resources = f.resources.filter((r) => r.name !== name);
    if (f.removed.includes(name)) f.removed = f.removed.filter((n) => n !== name);
  }
}

/** Stops tracking every name out of the subscription's reach. */
function forgetOutOfReach(state: DeltaTypeState): void {
  if (state.wildcard) return;
  const tracked = new Set([...state.returned.keys(), ...state.rejected.keys(), ...state.reportedMissing]);
  for (const name of tracked) if (!state.names.has(name)) forget(state, name);
}

/**
 * Applies resource_names_subscribe, then resource_names_unsubscribe; true when the subscription
 * changed in a way the client must be answered for.
 *
 * - First request of a type: LDS/CDS naming nothing in either list is the legacy wildcard.
 *   Later requests never are (the legacy rule is about a stream that never named anything, and
 *   any later empty request is an ACK or a no-op).
 * - "*" subscribes to / unsubscribes from the wildcard (LDS/CDS; elsewhere it is a plain name).
 * - A name subscribed again on a later request is resent (or reported removed) even if the
 *   client seems to hold it: clients forget. On the first request, initial_resource_versions says
 *   what the client holds instead.
 * - Unsubscribing a name the wildcard still reaches: the client cannot tell whether to keep it,
 *   so the next response carries it (or removes it if it does not exist).
 * - Names out of reach are no longer tracked: when the wildcard ends, the names only it reached;
 *   when a name is unsubscribed without a wildcard, that name. No response is needed for either.
 */
export function applySubscription(
  state: DeltaTypeState,
  subscribe: readonly string[],
  unsubscribe: readonly string[],
  first: boolean,
): boolean {
  const canWildcard = wildcardTypes.has(state.typeUrl);
  if (first || subscribe.length > 0 || unsubscribe.length > 0) state.subKey = undefined;
  let changed = first;
  if (first && canWildcard && subscribe.length === 0 && unsubscribe.length === 0) state.wildcard = true;
  for (const name of subscribe) {
    if (canWildcard && name === "*") {
      if (state.wildcard && !first) for (const n of [...state.returned.keys()]) forget(state, n);
      state.wildcard = true;
    } else {
      state.names.add(name);
      if (!first) {
        state.resend.add(name);
        state.marked = true;
      }
    }
    changed = true;
  }
  const wasWildcard = state.wildcard;
  const leftExplicit: string[] = [];
  for (const name of unsubscribe) {
    if (canWildcard && name === "*") {
      state.wildcard = false;
    } else if (state.names.delete(name)) {
      leftExplicit.push(name);
    }
  }
  for (const name of leftExplicit) {
    if (state.wildcard) {
      state.resend.add(name);
      state.marked = true;
      changed = true;
    } else {
      forget(state, name);
    }
  }
  // Reach shrinks only when the wildcard ends (names unsubscribed alone were forgotten above), and
  // initial_resource_versions may name what the first request does not subscribe to: an ACK
  // changes no reach, so it never walks what the client holds.
  if (first || (wasWildcard && !state.wildcard)) forgetOutOfReach(state);
  return changed;
}

/** The outcome of matching a response_nonce to a response in flight. */
export type Answer =
  | { kind: "ack"; answered: InFlight }
  | { kind: "nack"; answered: InFlight; message: string }
  | { kind: "unknown" };

/**
 * Records an ACK or NACK of the response with `nonce`. Responses sent before it and never
 * answered count as applied (a client answers in order). An ACK moves the response into `held`.
 * A NACK leaves `held` as it was (the client keeps its last good version; it is not assumed to
 * hold anything of the rejected response) and remembers the rejected versions so they are not
 * resent until they change. An unknown nonce (stale, or from another stream) changes nothing.
 */
export function answer(state: DeltaTypeState, nonce: string, error: string | undefined): Answer {
  const i = inflightIndex(state.inflight, nonce);
  if (i < 0) return { kind: "unknown" };
  // Those before it count as applied; the oldest answered (the usual ACK) makes no array.
  if (i > 0) for (const f of state.inflight.splice(0, i)) applyTo(state, f);
  const answered = takeFirst(state.inflight) as InFlight;
  if (error !== undefined) {
    for (const r of answered.resources) state.rejected.set(r.name, r.version);
    state.marked = true;
    unapply(state, answered);
    return { kind: "nack", answered, message: error };
  }
  applyTo(state, answered);
  return { kind: "ack", answered };
}

/** The index of the response with `nonce` in flight, or -1 (a loop: no closure per ACK). */
function inflightIndex(inflight: readonly InFlight[], nonce: string): number {
  for (let i = 0; i < inflight.length; i++) if ((inflight[i] as InFlight).nonce === nonce) return i;
  return -1;
}

/**
 * Bounds the responses in flight: beyond `keep`, the oldest count as applied. A client answers
 * every response in order, so one that far behind has applied them or will not answer at all.
 */
export function settleOldest(state: DeltaTypeState, keep: number): void {
  while (state.inflight.length > keep) applyTo(state, takeFirst(state.inflight) as InFlight);
}

function applyTo(state: DeltaTypeState, f: InFlight): void {
  const rejected = state.marked && state.rejected.size > 0;
  // Indexed loops, as in sent(): once per ACK on every stream.
  const { resources, removed } = f;
  for (let i = 0; i < resources.length; i++) {
    const r = resources[i] as Versioned;
    state.held.set(r.name, r.version);
    if (rejected) state.rejected.delete(r.name);
  }
  for (let i = 0; i < removed.length; i++) state.held.delete(removed[i] as string);
}

/** A NACKed response leaves the view: each name it touched is as `held` and later responses say. */
function unapply(state: DeltaTypeState, f: InFlight): void {
  const later = (name: string) =>
    state.inflight.some((g) => g.resources.some((r) => r.name === name) || g.removed.includes(name));
  for (const name of [...f.resources.map((r) => r.name), ...f.removed]) {
    if (later(name)) continue;
    const held = state.held.get(name);
    if (held === undefined) state.returned.delete(name);
    else state.returned.set(name, held);
  }
}
