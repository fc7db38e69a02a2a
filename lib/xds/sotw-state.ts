/**
 * What a SotW session tracks per type URL, and the plain rules over it: subscriptions (xDS
 * protocol, "How the client specifies what resources to return"), comparing answers, and the
 * status a type reports. Plain data and synchronous functions; sotw.ts does the I/O.
 */

import { statusLists } from "./status-lists.ts";
import { type NackStatus, type ProxyTypeStatus, type StoredResource, TypeUrl } from "./types.ts";
import type { VersionMap } from "./version.ts";

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

export function sameVersions(sent: ReadonlyMap<string, string>, resources: StoredResource[]): boolean {
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
