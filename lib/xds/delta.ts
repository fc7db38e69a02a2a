/**
 * The Delta (incremental) ADS session of one stream, independent of transport: requests and push
 * signals in, DeltaDiscoveryResponses out. Follows the xDS protocol document (envoyproxy/envoy
 * docs/root/api-docs/xds_protocol.rst, "Incremental xDS"): subscriptions by name and wildcard,
 * initial_resource_versions, removed_resources for what is gone or never existed, nonces pairing
 * ACKs and NACKs, subscription changes honoured whatever the nonce. delta-state.ts holds the
 * rules for subscriptions and ACK/NACK; delta-diff.ts decides what to send against what the
 * client holds.
 */

import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { openGate, type SyncGate } from "../resources/sync-gate.ts";
import type { ProxyStatus } from "../resources/types.ts";
import { versionsHashedNow } from "../resources/version.ts";
import { pushOrder } from "../resources/xds-types.ts";
import { createSerial } from "../serial.ts";
import { defaultMaxResponseBytes } from "./budget.ts";
import { changeSource, indexChanges } from "./change-source.ts";
import {
  answerNamed,
  changedInReach,
  gated,
  type Part,
  partsUnderBudget,
  pushParts,
  pushReach,
  type TypeDiff,
  typeDiff,
} from "./delta-answer.ts";
import { diffForClient, type Holdings } from "./delta-diff.ts";
import { deltaResponse, sharedDeltaResponse } from "./delta-response.ts";
import { classAnswers, type SharedAnswer, subscriptionKey } from "./delta-shared.ts";
import {
  type Answer,
  answer,
  applySubscription,
  type DeltaTypeState,
  type InFlight,
  newTypeState,
  sent,
  settleOldest,
} from "./delta-state.ts";
import { retainedNode } from "./node-meta.ts";
import { createNonces } from "./nonce.ts";
import { recordBounds, type StatusReport } from "./proxy-record.ts";
import type { ResourceSource } from "./source.ts";
import { streamStatus } from "./status-lists.ts";
import { noteLast, recordAck, recordNack, subscriptionStatus } from "./subscription.ts";

export interface DeltaSessionOptions {
  /** Published resources; read on every answer, so the session holds no mesh state. */
  source: ResourceSource;
  /** Fresh nonce per response; default nonce.ts createNonces(). Must never repeat within a stream. */
  nonce?: () => string;
  /**
   * Called after every ACK and NACK with the stream's status (e.g. to store under keys.proxy()):
   * after a NACK the status, after an ACK a read of it (call it for the status as of then).
   */
  onStatus?: (status: StatusReport) => void;
  /**
   * Start-up sync: while closed, no name the client holds is put in removed_resources (names it
   * never held may still be reported absent); the next push after it opens sends the removals.
   */
  gate?: SyncGate;
  /**
   * EDGEPILOT_MAX_RESPONSE_BYTES (default budget.ts's): an answer over it goes out as several
   * responses under it, each with its own nonce, ACKed or NACKed on its own.
   */
  maxResponseBytes?: number;
  /** Where a resource too large to fit any response alone is reported (it is sent alone). */
  log?: (line: string) => void;
}

export interface DeltaSession {
  /**
   * Handles one request: records its ACK/NACK, applies its subscription changes (even when its
   * nonce is stale) and answers for its type only when there is something to send or remove (or
   * for a first wildcard request from a client holding nothing): one response, or several when
   * the answer is over the byte budget (removals with or after the last one).
   *
   * Answered at once, an array and no promise, for a plain ACK or NACK (an open type, no
   * subscription change: nothing to diff) when no call is pending and versions hash
   * synchronously. Else a promise.
   */
  onRequest(req: DeltaDiscoveryRequest): DeltaDiscoveryResponse[] | Promise<DeltaDiscoveryResponse[]>;
  /**
   * Re-reads every subscribed type (or only `typeUrls`) and sends what changed: first the
   * additions and updates of each type in push order (CDS, EDS, LDS, RDS), then the removals of
   * each type, referrers first (LDS, RDS, CDS, EDS). With `changed` (every resource the push
   * changed), only those names in the subscription's reach are re-read and diffed: the same
   * responses at a cost that follows the change, not the subscription.
   *
   * Answered at once, an array and no promise, when `typeUrls` is not given, no call is pending
   * and the push itself answers every name it makes the session look at (the change feed carries
   * their versions and bytes, nothing to resend, versions hashed synchronously). Else a promise.
   */
  onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): DeltaDiscoveryResponse[] | Promise<DeltaDiscoveryResponse[]>;
  /** The Node of the first request that carried one. */
  node(): Node | undefined;
  /** The stream's current status (plain data); `sent.versions` is what the client is taken to hold. */
  status(): ProxyStatus;
  /** The names explicitly subscribed for `typeUrl` (for request limits). */
  subscribed(typeUrl: string): ReadonlySet<string>;
}

const none: ReadonlySet<string> = new Set();
/** No removals (shared and frozen: a flight's list is replaced, never changed). */
const noNames: readonly string[] = Object.freeze([]);
/** The answer of a push or request that sends nothing (shared: never mutated). */
const noResponses: DeltaDiscoveryResponse[] = [];

/** Unanswered responses kept per type before the oldest count as applied (see settleOldest). */
const maxInFlight = 64;

/**
 * Creates the session of one stream. Calls are serialized: each onRequest/onPush runs after the
 * previous one finished (one answered at once only when none is pending), so the transport may
 * call them concurrently and must write the responses in the order the calls return or resolve.
 */
export function createDeltaSession(options: DeltaSessionOptions): DeltaSession {
  const { source } = options;
  const gate = options.gate ?? openGate;
  const nextNonce = options.nonce ?? createNonces();
  const states = new Map<string, DeltaTypeState>();
  let node: Node | undefined;
  const serialized = createSerial();

  /**
   * typeDiff of `only` (default: the whole subscription) read from `from` (a push's change feed
   * over `source`; default `source`), gated.
   */
  async function diff(state: DeltaTypeState, only?: ReadonlySet<string>, from = source): Promise<TypeDiff> {
    const view = state.returned;
    // Names to resend are diffed as if the client held nothing of them.
    const held: Holdings =
      state.resend.size === 0
        ? view
        : {
            get: (name) => (state.resend.has(name) ? undefined : view.get(name)),
            has: (name) => !state.resend.has(name) && view.has(name),
            keys: () => [...view.keys()].filter((name) => !state.resend.has(name)).values(),
          };
    const sub = only ? { wildcard: false, names: only } : { wildcard: state.wildcard, names: state.names };
    const d = typeDiff(state, only !== undefined, await diffForClient(from, state.typeUrl, sub, held));
    return d.removed.length === 0 ? d : gated(d, await gate.synced());
  }

  /**
   * typeDiff of the push's changes in the subscription's reach, answered by the push itself without
   * a promise: undefined when a name needs the store (or names wait to be resent: they do), null
   * when the push changes nothing this type reaches.
   */
  function diffNow(
    state: DeltaTypeState,
    changed: ReadonlyMap<string, ResourceChange> | undefined,
  ): TypeDiff | null | undefined {
    if (state.resend.size > 0) return undefined;
    const named = changedInReach(state, changed);
    return named.length === 0 ? null : answerNamed(state, changed, named);
  }

  const budget = options.maxResponseBytes ?? defaultMaxResponseBytes;

  /**
   * The parts as responses under the budget (partsUnderBudget), in order, each tracked in flight on its
   * own. Without a promise when every set version is at hand (versionNow), else one per response.
   */
  function respond(parts: readonly Part[]): DeltaDiscoveryResponse[] | Promise<DeltaDiscoveryResponse[]> {
    const pieces = partsUnderBudget(parts, budget, options.log);
    const out: DeltaDiscoveryResponse[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] as Part;
      const nonce = track(piece);
      const version = piece.state.returned.versionNow();
      if (version === undefined) return respondLater(pieces, i, nonce, out);
      out.push(response(piece, nonce, version));
    }
    return out;
  }

  /** respond from piece `i` on (tracked already with `nonce`), awaiting each set version. */
  async function respondLater(
    pieces: readonly Part[],
    i: number,
    nonce: string,
    out: DeltaDiscoveryResponse[],
  ): Promise<DeltaDiscoveryResponse[]> {
    let piece = pieces[i] as Part;
    out.push(response(piece, nonce, await piece.state.returned.version()));
    for (let j = i + 1; j < pieces.length; j++) {
      piece = pieces[j] as Part;
      const next = track(piece);
      out.push(response(piece, next, await piece.state.returned.version()));
    }
    return out;
  }

  /** Records a response going out (in flight, what the client is taken to hold); returns its nonce. */
  function track({ state, resources, removed }: Part): string {
    const nonce = nextNonce();
    const flight: InFlight = { nonce, resources, removed };
    sent(state, flight);
    settleOldest(state, maxInFlight);
    if (state.marked && (state.reportedMissing.size > 0 || state.rejected.size > 0))
      for (const r of resources) {
        state.reportedMissing.delete(r.name);
        state.rejected.delete(r.name);
      }
    for (const name of removed)
      if (state.names.has(name)) {
        state.reportedMissing.add(name);
        state.marked = true;
      }
    return nonce;
  }

  /** The response of a tracked piece; `version`: the set version of the view once it is applied. */
  function response(
    { state, resources, removed }: Part,
    nonce: string,
    version: string,
  ): DeltaDiscoveryResponse {
    const out = deltaResponse(state.typeUrl, resources, removed, nonce, version);
    noteLast(state, nonce, version);
    return out;
  }

  /** What an ACK reports: a read of the status, built only when a record is written (at most once a second). */
  const statusRead = () => status(recordBounds.names);

  /**
   * Records what an ACK or NACK says (`held`: the set version of what the client holds for sure,
   * now) and reports the status: after a NACK the status itself (its message is logged at once),
   * after an ACK a read of it.
   */
  function settle(state: DeltaTypeState, req: DeltaDiscoveryRequest, answered: Answer, held: string): void {
    if (answered.kind === "ack") {
      recordAck(state, held);
      options.onStatus?.(statusRead);
    } else if (answered.kind === "nack") {
      const kept = state.ackedVersion === undefined && state.held.size === 0 ? "" : held;
      recordNack(state, kept, req.responseNonce, answered.message);
      options.onStatus?.(status(recordBounds.names));
    }
  }

  /** The nonce pairs an ACK/NACK with a response (answer); "" answers nothing. */
  const answerOf = (state: DeltaTypeState, req: DeltaDiscoveryRequest): Answer =>
    req.responseNonce === ""
      ? { kind: "unknown" }
      : answer(state, req.responseNonce, req.errorDetail ? req.errorDetail.message : undefined);

  async function onRequest(req: DeltaDiscoveryRequest): Promise<DeltaDiscoveryResponse[]> {
    if (node === undefined && req.node !== undefined) node = retainedNode(req.node);
    if (req.typeUrl === "") return [];
    let state = states.get(req.typeUrl);
    const first = state === undefined;
    if (!state) {
      state = newTypeState(req.typeUrl, req.initialResourceVersions);
      states.set(req.typeUrl, state);
    }
    // The nonce never decides whether the subscription changes below are honoured (the
    // document: "should *not* be used to reject stale requests").
    const answered = answerOf(state, req);
    const changed = applySubscription(state, req.resourceNamesSubscribe, req.resourceNamesUnsubscribe, first);
    // Its key built now, not at its first push: a second stream of it makes it shared before a push reaches either.
    if (changed) subscriptionKey(state);
    if ((first && state.held.size > 0) || answered.kind !== "unknown") {
      const held = state.held.versionNow() ?? (await state.held.version());
      if (first && state.held.size > 0) state.ackedVersion = held;
      settle(state, req, answered, held);
    }
    if (!changed) return [];
    const d = await diff(state);
    // Envoy's initial fetch of a wildcard type waits for a first response, even an empty one
    // (an empty mesh). A client that said what it holds needs none when nothing differs.
    const mustAnswer = first && state.wildcard && Object.keys(req.initialResourceVersions).length === 0;
    if (d.resources.length === 0 && d.removed.length === 0 && !mustAnswer) return [];
    return respond([d]);
  }

  /** onRequest's answer at once (see DeltaSession.onRequest), or undefined having changed nothing. */
  function requestNow(req: DeltaDiscoveryRequest): DeltaDiscoveryResponse[] | undefined {
    // Only an ACK or NACK of an open type that names no subscription change: nothing to diff
    // (applySubscription of two empty lists on a later request changes nothing).
    if (!serialized.idle || !versionsHashedNow() || req.responseNonce === "") return undefined;
    if (req.resourceNamesSubscribe.length > 0 || req.resourceNamesUnsubscribe.length > 0) return undefined;
    if (node === undefined && req.node !== undefined) return undefined;
    const state = states.get(req.typeUrl);
    if (!state || state.held.versionNow() === undefined) return undefined;
    const answered = answerOf(state, req);
    if (answered.kind !== "unknown") settle(state, req, answered, state.held.versionNow() as string);
    return noResponses;
  }

  async function onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): Promise<DeltaDiscoveryResponse[]> {
    const diffs: TypeDiff[] = [];
    if (!changed) {
      for (const typeUrl of pushOrder) {
        const state = states.get(typeUrl);
        if (state && (!typeUrls || typeUrls.includes(typeUrl))) diffs.push(await diff(state));
      }
    } else {
      // What the push changed answers for itself (version and bytes): no store read for those names.
      const index = indexChanges(changed);
      const from = changeSource(source, index);
      for (const { state, only } of pushReach(states, index, typeUrls))
        diffs.push(await diff(state, only, from));
    }
    return respond(pushParts(diffs));
  }

  /**
   * pushNow's answer from the push's classes (delta-shared.ts classAnswers), each answer one
   * response tracked as respond tracks it; undefined, having changed nothing, when a type must
   * answer alone.
   */
  function pushShared(index: ReturnType<typeof indexChanges>): DeltaDiscoveryResponse[] | undefined {
    const answers = classAnswers(index, states, budget, answerNamed);
    if (answers === undefined || answers.length === 0) return answers && noResponses;
    // map(): an array of the answers' length, not [] grown by push() (room for 16) per stream.
    return answers.map(({ state, answer }) => sharedResponse(state, answer));
  }

  /** A class's answer sent on this stream: tracked in flight as respond's, with its own nonce and set version. */
  function sharedResponse(state: DeltaTypeState, answer: SharedAnswer): DeltaDiscoveryResponse {
    const nonce = nextNonce();
    sent(state, { nonce, resources: answer.resources, removed: noNames });
    // A settled state had nothing in flight: one is, under maxInFlight, and no name was missing or rejected.
    const version = state.returned.versionNow() as string;
    noteLast(state, nonce, version);
    return sharedDeltaResponse(state.typeUrl, answer.messages, nonce, version);
  }

  /** onPush's answer at once (see DeltaSession.onPush), or undefined having changed nothing. */
  function pushNow(changed?: readonly ResourceChange[]): DeltaDiscoveryResponse[] | undefined {
    if (!changed || !serialized.idle || !versionsHashedNow()) return undefined;
    const index = indexChanges(changed);
    const shared = pushShared(index);
    if (shared !== undefined) return shared;
    const diffs: TypeDiff[] = [];
    let removing = false;
    // Nothing changes before every type's answer is known to come from the push alone.
    for (const typeUrl of pushOrder) {
      const state = states.get(typeUrl);
      if (state === undefined) continue;
      const d = state.returned.versionNow() === undefined ? undefined : diffNow(state, index.get(typeUrl));
      if (d === undefined) return undefined;
      if (d === null) continue;
      removing ||= d.removed.length > 0;
      diffs.push(d);
    }
    if (removing) {
      const open = gate.synced();
      if (typeof open !== "boolean") return undefined;
      for (let i = 0; i < diffs.length; i++) diffs[i] = gated(diffs[i] as TypeDiff, open);
    }
    // Nothing in reach: no response, nothing tracked.
    if (diffs.length === 0) return noResponses;
    const out = respond(pushParts(diffs));
    // Every view's version was at hand and versions hash synchronously: respond made no promise.
    if (!Array.isArray(out)) throw new Error("xds: a synchronous delta push needed a promise");
    return out;
  }

  /** The status; `bound` cuts each list (see status-lists.ts): onStatus reports recordBounds.names. */
  function status(bound?: number): ProxyStatus {
    return streamStatus(node, states.values(), (s) => subscriptionStatus(s, bound));
  }

  return {
    onRequest: (req) => requestNow(req) ?? serialized(() => onRequest(req)),
    onPush: (typeUrls, changed) =>
      (typeUrls === undefined ? pushNow(changed) : undefined) ?? serialized(() => onPush(typeUrls, changed)),
    node: () => node,
    status: () => status(),
    subscribed: (typeUrl) => states.get(typeUrl)?.names ?? none,
  };
}
