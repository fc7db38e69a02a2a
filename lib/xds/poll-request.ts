/**
 * Reads a PollRequest: what a stateless delta client subscribes to and holds, and how long it
 * may wait. A poll carries the whole subscription every time, so the stream-only fields of a
 * DeltaDiscoveryRequest (nonce, unsubscribe) are refused rather than ignored. error_detail is a
 * NACK: the client rejected what it was last given of this type (initial_resource_versions are
 * what it kept); it is validated (code non-zero, message at most maxPollNackMessageChars, a node id
 * a status record can hold) and reported to the server's proxy status; the answer is the same.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { DeltaDiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../resources/xds-types.ts";
import type { DeltaSubscription } from "./delta-diff.ts";
import { nodeGenerator } from "./node-meta.ts";
import { nodeIdProblem } from "./proxy-record.ts";
import { wildcardTypes } from "./subscription.ts";

/** The longest a long poll is held, whatever it asks for (ms). */
export const maxPollWaitMs = 60_000;

/**
 * The longest error_detail.message a poll may carry (characters): a proxy's reason, not a dump.
 * The status record keeps its first recordBounds.nackChars (proxy-record.ts); a longer message
 * is refused so a client learns its NACK was not taken rather than seeing it cut silently.
 */
export const maxPollNackMessageChars = 4096;

/** A poll's NACK: the client's error_detail (google.rpc.Status; details are ignored). */
export interface PollNack {
  code: number;
  message: string;
}

/** One Poll/Watch NACK as the server read it, for the proxy status (lib/core/poll-nack.ts). */
export interface PollNackReport extends PollNack {
  /** "" when the request named no node: then it is logged, not recorded. */
  nodeId: string;
  generator: string;
  typeUrl: string;
  wildcard: boolean;
  /** The explicit names of the request's subscription. */
  subscribed: readonly string[];
  /** How many resources the client says it kept (initial_resource_versions). */
  kept: number;
}

/** The report of a valid query's NACK (undefined without one); `node` is the request's. */
export function pollNackReport(query: PollQuery, node: Node | undefined): PollNackReport | undefined {
  if (!query.nack) return undefined;
  return {
    ...query.nack,
    nodeId: node?.id ?? "",
    generator: nodeGenerator(node),
    typeUrl: query.typeUrl,
    wildcard: query.sub.wildcard,
    subscribed: [...query.sub.names],
    kept: query.held.size,
  };
}

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
  /** Set when the request NACKs what the client was last given of this type. */
  nack?: PollNack;
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
  const nack = readNack(req);
  if (nack !== undefined && "problem" in nack) return fail(nack.problem);
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
      ...(nack && { nack }),
    },
  };
}

/** The request's NACK, if any, or the problem with it (its node must be one a record can name). */
function readNack(req: DeltaDiscoveryRequest): PollNack | { problem: string } | undefined {
  const e = req.errorDetail;
  if (e === undefined) return undefined;
  if (e.code === 0)
    return {
      problem:
        "request.error_detail.code must be non-zero: error_detail is a NACK (a gRPC status code such as 13, INTERNAL); leave error_detail out to ACK",
    };
  if (e.message.length > maxPollNackMessageChars)
    return {
      problem: `request.error_detail.message has ${e.message.length} characters; at most ${maxPollNackMessageChars}`,
    };
  const nodeProblem = req.node ? nodeIdProblem(req.node.id) : undefined;
  if (nodeProblem) return { problem: `request.${nodeProblem}` };
  return { code: e.code, message: e.message };
}

function readWait(wait: PollRequestLike["wait"]): { ok: true; ms: number } | { ok: false; message: string } {
  if (!wait) return { ok: true, ms: 0 };
  const { seconds, nanos } = wait;
  if (seconds < 0n || nanos < 0) return { ok: false, message: "wait must not be negative" };
  if (nanos > 999_999_999) return { ok: false, message: "wait.nanos must be below one second" };
  if (seconds >= BigInt(maxPollWaitMs / 1000)) return { ok: true, ms: maxPollWaitMs };
  return { ok: true, ms: Math.min(maxPollWaitMs, Number(seconds) * 1000 + Math.ceil(nanos / 1_000_000)) };
}
