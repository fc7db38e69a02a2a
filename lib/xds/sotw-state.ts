/**
 * What a SotW session tracks per type URL, and the plain rules over it: subscriptions (xDS
 * protocol, "How the client specifies what resources to return"), comparing answers, and the
 * status a type reports. Plain data and synchronous functions; sotw.ts does the I/O.
 */

import type { DiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../resources/changes.ts";
import type { NackStatus, ProxyTypeStatus, StoredResource } from "../resources/types.ts";
import type { VersionMap } from "../resources/version.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import { statusLists } from "./status-lists.ts";

/** Types with a wildcard subscription ("*", or legacy: never named anything). */
export const wildcardTypes: ReadonlySet<string> = new Set<string>([TypeUrl.listener, TypeUrl.cluster]);

/** The last answer of a type: `nonce` is its last piece's, `nonces` every piece's in order; `nacked` if one was. */
export interface SentAnswer {
  versionInfo: string;
  nonce: string;
  nonces: string[];
  nacked: boolean;
  /** name─▶version of the answer: what the client is taken to hold (kept up to date in place). */
  versions: VersionMap;
}

/** The state of one type URL on one SotW stream. */
export interface TypeState {
  typeUrl: string;
  /** Some request for this type named resources: an empty list no longer means wildcard. */
  explicit: boolean;
  wildcard: boolean;
  names: Set<string>;
  sent?: SentAnswer;
  /** A first request held while not synced: the version_info the client holds. */
  waiting?: string;
  /** An answer held while not synced because it would only tell of names that do not exist (answersOnlyMissing). */
  missingHeld?: boolean;
  ackedVersion?: string;
  nack?: NackStatus;
}

/** Whether `name` is in the subscription's reach (through the wildcard or by name). */
export function inReach(state: TypeState, name: string): boolean {
  return state.wildcard || state.names.has(name);
}

/**
 * Applies a request's resource_names to the subscription; true when the subscription changed.
 * LDS/CDS: empty before any name was ever given is the legacy wildcard, "*" is the explicit one,
 * empty afterwards means unsubscribed from everything. Other types: the names, "*" included, as given.
 */
export function subscribe(state: TypeState, resourceNames: readonly string[]): boolean {
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
export function answersOnlyMissing(state: TypeState, resources: readonly StoredResource[]): boolean {
  if (!wildcardTypes.has(state.typeUrl) || state.names.size === 0) return false;
  if (state.sent ? !sameVersions(state.sent.versions, resources) : resources.length > 0) return false;
  const now = new Set(resources.map((r) => r.name));
  for (const name of state.names) if (!now.has(name)) return true;
  return false;
}

/**
 * True when subscribe(state, resourceNames) would change nothing at all (an ACK repeating its
 * subscription): the caller may skip it. Pure.
 */
export function subscribedAlready(state: TypeState, resourceNames: readonly string[]): boolean {
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
 * Records the ACK or NACK `req` of piece `piece` of the answer `sent`: a NACK of any piece at once,
 * an ACK with the last piece only (unless a piece was NACKed). True when it is the last piece.
 */
export function settleAnswer(
  state: TypeState,
  sent: SentAnswer,
  req: DiscoveryRequest,
  piece: number,
): boolean {
  const lastPiece = piece === sent.nonces.length - 1;
  if (req.errorDetail) {
    sent.nacked = true;
    // NACK: the proxy keeps its last good version; do not resend until something changes.
    state.nack = {
      versionInfo: req.versionInfo,
      nonce: req.responseNonce,
      message: req.errorDetail.message,
    };
  } else if (lastPiece && !sent.nacked) {
    state.ackedVersion = req.versionInfo;
    state.nack = undefined;
  }
  return lastPiece;
}

/** The names of `state`'s type a push changed (`index`: change-source.ts indexChanges) that the client was sent at another version, or not at all. */
export function touchedBy(
  state: TypeState,
  sent: SentAnswer,
  index: ReadonlyMap<string, ReadonlyMap<string, ResourceChange>>,
): string[] {
  const touched: string[] = [];
  for (const [name, c] of index.get(state.typeUrl) ?? []) {
    if (inReach(state, name) && sent.versions.get(name) !== (c.version ?? undefined)) touched.push(name);
  }
  return touched;
}

/**
 * The resources of `touched` (as `found` holds them now: a name absent does not exist) the client
 * does not hold, sorted; the sent map updated to them in place. Undefined when it holds all.
 */
export function takeChanges(
  sent: SentAnswer,
  touched: readonly string[],
  found: readonly StoredResource[],
): StoredResource[] | undefined {
  const byName = new Map(found.map((r) => [r.name, r]));
  const versions = sent.versions;
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

export function typeStatus(s: TypeState, bound?: number): ProxyTypeStatus {
  const { subscribed, subscribedCount, sentCount, versions } = statusLists(s.names, s.sent?.versions, bound);
  const out: ProxyTypeStatus = { typeUrl: s.typeUrl, wildcard: s.wildcard, subscribed };
  if (subscribedCount !== undefined) out.subscribedCount = subscribedCount;
  if (s.sent && versions) out.sent = { versionInfo: s.sent.versionInfo, nonce: s.sent.nonce, versions };
  if (sentCount !== undefined) out.sentCount = sentCount;
  if (s.ackedVersion !== undefined) out.ackedVersion = s.ackedVersion;
  if (s.nack) out.nack = { ...s.nack };
  return out;
}
