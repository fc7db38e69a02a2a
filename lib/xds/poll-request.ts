/**
 * Reads a PollRequest: what a stateless delta client subscribes to and holds, and how long it
 * may wait. A poll carries the whole subscription every time, so the stream-only fields of a
 * DeltaDiscoveryRequest (nonce, unsubscribe, error_detail) are refused rather than ignored.
 */
import type { DeltaDiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DeltaSubscription } from "./delta-diff.ts";
import { wildcardTypes } from "./delta-diff.ts";
import { TypeUrl } from "./types.ts";

/** The longest a long poll is held, whatever it asks for (ms). */
export const maxPollWaitMs = 60_000;

/** A PollRequest as the wire gives it (the generated message, or anything shaped like it). */
export interface PollRequestLike {
  request?: DeltaDiscoveryRequest | undefined;
  wait?: { seconds: bigint; nanos: number } | undefined;
}

/** A valid poll: one type, its whole subscription, what the client holds, the wait in ms. */
export interface PollQuery {
  typeUrl: TypeUrl;
  sub: DeltaSubscription;
  /** name ─▶ version the client holds (initial_resource_versions). */
  held: ReadonlyMap<string, string>;
  /** 0: answer now. Otherwise at most maxPollWaitMs. */
  waitMs: number;
}

/** A valid query, or a message naming the bad field. */
export type PollQueryResult = { ok: true; query: PollQuery } | { ok: false; message: string };

const served: ReadonlySet<string> = new Set(Object.values(TypeUrl));
const servedList = Object.values(TypeUrl).join(", ");

/** Validates a PollRequest; the message names the field and says what to do instead. */
export function readPollRequest(input: PollRequestLike, maxNames: number): PollQueryResult {
  const req = input.request;
  const fail = (message: string): PollQueryResult => ({ ok: false, message });
  if (!req)
    return fail("request is required: a DeltaDiscoveryRequest with type_url and what to subscribe to");
  if (req.typeUrl === "") return fail(`request.type_url is required: one of ${servedList}`);
  if (!served.has(req.typeUrl))
    return fail(`request.type_url ${req.typeUrl} is not served: one of ${servedList}`);
  const typeUrl = req.typeUrl as TypeUrl;
  if (req.responseNonce !== "")
    return fail(
      "request.response_nonce must be empty: a poll answers no earlier response, there is nothing to ACK",
    );
  if (req.errorDetail !== undefined)
    return fail("request.error_detail must be empty: a poll has no earlier response to NACK");
  if (req.resourceNamesUnsubscribe.length > 0)
    return fail(
      "request.resource_names_unsubscribe must be empty: a poll carries its whole subscription in resource_names_subscribe",
    );
  if (req.resourceLocatorsSubscribe.length > 0 || req.resourceLocatorsUnsubscribe.length > 0)
    return fail(
      "request.resource_locators_subscribe/unsubscribe are not supported: use resource_names_subscribe",
    );
  const names = req.resourceNamesSubscribe;
  if (names.length > maxNames)
    return fail(
      `request.resource_names_subscribe has ${names.length} names; at most ${maxNames} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
    );
  const heldCount = Object.keys(req.initialResourceVersions).length;
  if (heldCount > maxNames)
    return fail(
      `request.initial_resource_versions has ${heldCount} entries; at most ${maxNames} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
    );
  const empty = names.indexOf("");
  if (empty >= 0) return fail(`request.resource_names_subscribe[${empty}] is empty: name a resource, or "*"`);
  const star = names.includes("*");
  if (star && !wildcardTypes.has(typeUrl))
    return fail(
      `request.resource_names_subscribe: "*" (wildcard) exists only for listeners and clusters, not ${typeUrl}`,
    );
  const wait = readWait(input.wait);
  if (!wait.ok) return wait;
  const explicit = names.filter((n) => n !== "*");
  return {
    ok: true,
    query: {
      typeUrl,
      sub: { wildcard: star || (names.length === 0 && wildcardTypes.has(typeUrl)), names: new Set(explicit) },
      held: new Map(Object.entries(req.initialResourceVersions)),
      waitMs: wait.ms,
    },
  };
}

function readWait(wait: PollRequestLike["wait"]): { ok: true; ms: number } | { ok: false; message: string } {
  if (!wait) return { ok: true, ms: 0 };
  const { seconds, nanos } = wait;
  if (seconds < 0n || nanos < 0) return { ok: false, message: "wait must not be negative" };
  if (nanos > 999_999_999) return { ok: false, message: "wait.nanos must be below one second" };
  if (seconds >= BigInt(maxPollWaitMs / 1000)) return { ok: true, ms: maxPollWaitMs };
  return { ok: true, ms: Math.min(maxPollWaitMs, Number(seconds) * 1000 + Math.ceil(nanos / 1_000_000)) };
}
