/**
 * What one ADS stream tracks for one type URL, the same for SotW (sotw.ts) and Delta (delta.ts),
 * as go-control-plane's one Subscription type serves both (pkg/server/stream/v3/subscription.go):
 * wildcard or not, the names subscribed, what the client is taken to hold (name ─▶ version of
 * what was returned to it), the last response sent, and what it last ACKed or NACKed. How a
 * request changes it is protocol-specific (sotw-state.ts subscribe, delta-state.ts
 * applySubscription); reading it (reach, status) is not. Plain data and synchronous functions.
 */

import type { NackStatus, ProxyTypeStatus } from "../resources/types.ts";
import type { VersionMap } from "../resources/version.ts";
import { xdsTypes } from "../resources/xds-types.ts";
import { statusLists } from "./status-lists.ts";

/** Types where a wildcard subscription exists (xDS protocol: LDS and CDS); "*" is a plain name elsewhere. */
export const wildcardTypes: ReadonlySet<string> = new Set<string>(
  xdsTypes.filter((t) => t.wildcard).map((t) => t.typeUrl),
);

/** One type URL on one stream, whichever protocol the stream speaks. */
export interface Subscription {
  readonly typeUrl: string;
  /** Subscribed to every resource of the type (the "*" wildcard, or the legacy empty request of LDS/CDS). */
  wildcard: boolean;
  /** Explicitly subscribed names ("*" excluded for LDS/CDS). */
  names: Set<string>;
  /**
   * name ─▶ version the client is taken to hold: what was returned to it (Delta: and what
   * initial_resource_versions said), kept up to date in place, so a push costs what changed.
   */
  returned: VersionMap;
  /** The last response sent (its nonce and version_info); undefined until the first. */
  last?: { nonce: string; versionInfo: string };
  /** The version_info the client last ACKed (Delta: the set version of what it holds for sure). */
  ackedVersion?: string;
  /** The last NACK; cleared by the next ACK. */
  nack?: NackStatus;
}

/** Whether `name` is in the subscription's reach (through the wildcard or by name). */
export function inReach(sub: Subscription, name: string): boolean {
  return sub.wildcard || sub.names.has(name);
}

/**
 * Notes the last response sent, in place once there is one: the record lives as long as the
 * stream instead of one more object per response for the collector (status reads copy it).
 */
export function noteLast(sub: Subscription, nonce: string, versionInfo: string): void {
  if (sub.last === undefined) sub.last = { nonce, versionInfo };
  else {
    sub.last.nonce = nonce;
    sub.last.versionInfo = versionInfo;
  }
}

/** Records an ACK of `versionInfo`: it is what the client holds, and no NACK stands. */
export function recordAck(sub: Subscription, versionInfo: string): void {
  sub.ackedVersion = versionInfo;
  sub.nack = undefined;
}

/** Records a NACK: the client kept `versionInfo` and rejected the response with `nonce`. */
export function recordNack(sub: Subscription, versionInfo: string, nonce: string, message: string): void {
  sub.nack = { versionInfo, nonce, message };
}

/**
 * The status of one type (status-lists.ts: every list, or the first `bound` of each with the
 * counts); what was returned is listed once a response went out.
 */
export function subscriptionStatus(sub: Subscription, bound?: number): ProxyTypeStatus {
  const last = sub.last;
  const { subscribed, subscribedCount, sentCount, versions } = statusLists(
    sub.names,
    last ? sub.returned : undefined,
    bound,
  );
  const out: ProxyTypeStatus = { typeUrl: sub.typeUrl, wildcard: sub.wildcard, subscribed };
  if (subscribedCount !== undefined) out.subscribedCount = subscribedCount;
  if (last && versions) out.sent = { versionInfo: last.versionInfo, nonce: last.nonce, versions };
  if (sentCount !== undefined) out.sentCount = sentCount;
  if (sub.ackedVersion !== undefined) out.ackedVersion = sub.ackedVersion;
  if (sub.nack) out.nack = { ...sub.nack };
  return out;
}
