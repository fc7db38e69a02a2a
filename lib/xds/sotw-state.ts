/**
 * What a SotW session tracks per type URL, and the plain rules over it: subscriptions (xDS
 * protocol, "How the client specifies what resources to return"), comparing answers, and the
 * status a type reports. Plain data and synchronous functions; sotw.ts does the I/O.
 */

import type { DiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { createVersionMap } from "../resources/version.ts";
import { inReach, recordAck, recordNack, type Subscription, wildcardTypes } from "./subscription.ts";

/**
 * The state of one type URL on one SotW stream: the Subscription (subscription.ts; `last` is the
 * last answer's last piece and version_info, `returned` its name ─▶ version map, kept up to date in
 * place) and what only SotW tracks.
 */
export interface SotwTypeState extends Subscription {
  /** Some request for this type named resources: an empty list no longer means wildcard. */
  explicit: boolean;
  /** Every piece's nonce of the last answer, in order (one unless it was cut under the byte budget). */
  nonces: string[];
  /** A piece of the last answer was NACKed. */
  nacked: boolean;
  /** A first request held while not synced: the version_info the client holds. */
  waiting?: string;
  /** An answer held while not synced because it would only tell of names that do not exist (answersOnlyMissing). */
  missingHeld?: boolean;
}

/** A fresh state for a type's first request. */
export function newSotwState(typeUrl: string): SotwTypeState {
  return {
    typeUrl,
    wildcard: false,
    names: new Set(),
    returned: createVersionMap(),
    explicit: false,
    nonces: [],
    nacked: false,
  };
}

/**
 * Applies a request's resource_names to the subscription; true when the subscription changed.
 * LDS/CDS: empty before any name was ever given is the legacy wildcard, "*" is the explicit one,
 * empty afterwards means unsubscribed from everything. Other types: the names, "*" included, as given.
 */
export function subscribe(state: SotwTypeState, resourceNames: readonly string[]): boolean {
  const wasWildcard = state.wildcard;
  const before = state.names;
  const canWildcard = wildcardTypes.has(state.typeUrl);
  if (resourceNames.length === 0) {
    state.wildcard = canWildcard && !state.explicit;
    state.names = new Set();
  } else {
    state.explicit = true;
    state.wildcard = canWildcard && resourceNames.includes("*");
    const names = canWildcard ? resourceNames.filter((n) => n !== "*") : resourceNames;
    // An ACK repeats the names it holds: keep the same set instead of building it again.
    const same =
      names.length >= before.size &&
      names.every((n) => before.has(n)) &&
      (names.length === before.size || new Set(names).size === before.size);
    if (!same) state.names = new Set(names);
  }
  if (wasWildcard !== state.wildcard) return true;
  if (state.names === before) return false;
  return before.size !== state.names.size || [...before].some((n) => !state.names.has(n));
}

/**
 * Whether an LDS/CDS answer of `resources` would tell the client nothing but that names it asked
 * for do not exist: it lacks an explicitly subscribed name and carries nothing the client was not
 * already sent (nothing at all, on a first answer). SotW responses for these types carry the whole
 * subscribed set, so such an answer says "does not exist" (xDS protocol, "Knowing When a Requested
 * Resource Does Not Exist"); before start-up sync that may only mean not loaded yet, so it is held.
 * An EDS/RDS answer never is: their omissions say nothing (the client's timer decides).
 */
export function answersOnlyMissing(state: SotwTypeState, resources: readonly StoredResource[]): boolean {
  if (!wildcardTypes.has(state.typeUrl) || state.names.size === 0) return false;
  if (state.last ? !sameVersions(state.returned, resources) : resources.length > 0) return false;
  const now = new Set(resources.map((r) => r.name));
  for (const name of state.names) if (!now.has(name)) return true;
  return false;
}

/**
 * True when subscribe(state, resourceNames) would change nothing at all (an ACK repeating its
 * subscription): the caller may skip it. Pure.
 */
export function subscribedAlready(state: SotwTypeState, resourceNames: readonly string[]): boolean {
  const canWildcard = wildcardTypes.has(state.typeUrl);
  if (resourceNames.length === 0)
    return state.names.size === 0 && state.wildcard === (canWildcard && !state.explicit);
  if (!state.explicit) return false;
  let named = 0;
  let star = false;
  for (const n of resourceNames) {
    if (canWildcard && n === "*") star = true;
    else if (!state.names.has(n)) return false;
    else named++;
  }
  if (state.wildcard !== star || named !== state.names.size) return false;
  // Every name held, as many as held: the same set unless one is repeated (then another is missing).
  return named <= 1 || new Set(resourceNames).size === resourceNames.length;
}

/**
 * Records the ACK or NACK `req` of piece `piece` of the last answer: a NACK of any piece at once,
 * an ACK with the last piece only (unless a piece was NACKed). True when it is the last piece.
 */
export function settleAnswer(state: SotwTypeState, req: DiscoveryRequest, piece: number): boolean {
  const lastPiece = piece === state.nonces.length - 1;
  if (req.errorDetail) {
    state.nacked = true;
    // NACK: the proxy keeps its last good version; do not resend until something changes.
    recordNack(state, req.versionInfo, req.responseNonce, req.errorDetail.message);
  } else if (lastPiece && !state.nacked) {
    recordAck(state, req.versionInfo);
  }
  return lastPiece;
}

/** The names of `state`'s type a push changed (`index`: change-source.ts indexChanges) that the client was sent at another version, or not at all. */
export function touchedBy(
  state: SotwTypeState,
  index: ReadonlyMap<string, ReadonlyMap<string, ResourceChange>>,
): string[] {
  const touched: string[] = [];
  for (const [name, c] of index.get(state.typeUrl) ?? []) {
    if (inReach(state, name) && state.returned.get(name) !== (c.version ?? undefined)) touched.push(name);
  }
  return touched;
}

/**
 * The resources of `touched` (as `found` holds them now: a name absent does not exist) the client
 * does not hold, sorted; `returned` updated to them in place. Undefined when it holds all.
 */
export function takeChanges(
  state: SotwTypeState,
  touched: readonly string[],
  found: readonly StoredResource[],
): StoredResource[] | undefined {
  const byName = new Map(found.map((r) => [r.name, r]));
  const versions = state.returned;
  const news = touched.filter((name) => versions.get(name) !== byName.get(name)?.version);
  if (news.length === 0) return undefined;
  const carried: StoredResource[] = [];
  for (const name of news.sort()) {
    const r = byName.get(name);
    if (r) carried.push(r);
    if (r) versions.set(name, r.version);
    else versions.delete(name);
  }
  return carried;
}

export function sameVersions(
  sent: ReadonlyMap<string, string>,
  resources: readonly StoredResource[],
): boolean {
  const now = new Map<string, string>();
  for (const r of resources) if (!now.has(r.name)) now.set(r.name, r.version);
  if (now.size !== sent.size) return false;
  for (const [name, version] of now) if (sent.get(name) !== version) return false;
  return true;
}
