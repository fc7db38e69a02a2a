/**
 * The State-of-the-World ADS session of one stream, independent of transport: requests and push
 * signals in, DiscoveryResponses out. Follows the xDS protocol document (envoyproxy/envoy
 * docs/root/api-docs/xds_protocol.rst): ACK/NACK by response_nonce and error_detail, stale nonces
 * ignored, answers only on change, names asked for before they exist remembered.
 *
 * The session serves what `source` holds for each type URL; which generator family that is, is the
 * stream's view's choice (view-source.ts, node metadata GENERATOR): an Envoy sidecar reads sidecar
 * resources (generators/sidecar/), a proxyless gRPC client the proxyless ones (generators/grpc/).
 */

import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import type { ResourceChange } from "../resources/changes.ts";
import { openGate, type SyncGate } from "../resources/sync-gate.ts";
import type { ProxyStatus, StoredResource } from "../resources/types.ts";
import { setVersion, versionsHashedNow } from "../resources/version.ts";
import { pushOrder } from "../resources/xds-types.ts";
import { createSerial } from "../serial.ts";
import {
  defaultMaxResponseBytes,
  oversized,
  ResponseTooLargeError,
  shortType,
  sotwResourceBytes,
} from "./budget.ts";
import { changedNow, changeSource, indexChanges } from "./change-source.ts";
import { retainedNode } from "./node-meta.ts";
import { createNonces } from "./nonce.ts";
import { recordBounds, type StatusReport } from "./proxy-record.ts";
import { type SotwAnswer, sotwAnswer, sotwPieces, uniqueByName } from "./response.ts";
import {
  answersOnlyMissing,
  newSotwState,
  type SotwTypeState,
  sameVersions,
  settleAnswer,
  subscribe,
  subscribedAlready,
  takeChanges,
  touchedBy,
} from "./sotw-state.ts";
import type { ResourceSource } from "./source.ts";
import { streamStatus } from "./status-lists.ts";
import { noteLast, subscriptionStatus, wildcardTypes } from "./subscription.ts";

export interface SotwSessionOptions {
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
   * Start-up sync: while closed, an LDS/CDS answer that lacks a name the client was last sent is
   * held, and so is a first answer to a client whose version_info differs from the answer's (it
   * holds something we cannot name). Held answers go out on the first push after it opens.
   */
  gate?: SyncGate;
  /**
   * EDGEPILOT_MAX_RESPONSE_BYTES (default budget.ts's). An EDS/RDS answer over it goes out as
   * several responses (same version_info, a nonce each); a CDS/LDS answer over it cannot be cut:
   * onRequest/onPush throw ResponseTooLargeError (the stream ends with it) and it is logged.
   */
  maxResponseBytes?: number;
  /** Where oversized answers and resources are reported. */
  log?: (line: string) => void;
}

export interface SotwSession {
  /**
   * Handles one request; the responses to send, in order: none, or the answer for the request's
   * type (several responses for an EDS/RDS answer over the byte budget).
   *
   * ACK/NACK of a cut answer: a request naming the nonce of any of its pieces is current (its
   * resource_names are honoured). A NACK of any piece is recorded at once. An ACK of an earlier
   * piece records nothing; the ACK of the last piece records the answer's version_info as ACKed,
   * unless a piece of it was NACKed. A nonce of an earlier answer is stale and ignored.
   *
   * Answered at once, an array and no promise, when no call is pending and the request is an ACK
   * or NACK (or a stale nonce) that changes no subscription: nothing to read. Else a promise.
   */
  onRequest(req: DiscoveryRequest): DiscoveryResponse[] | Promise<DiscoveryResponse[]>;
  /**
   * Re-reads every subscribed type (or only `typeUrls`) in push order CDS, EDS, LDS, RDS and
   * answers each whose name─▶version map differs from the last one sent. With `changed` (every
   * resource the push changed), a type none of whose subscribed names changed is not read at all;
   * EDS/RDS answer just the changed names, from the change feed (a cost that follows the change,
   * not the subscription), with the version_info of the whole set; LDS/CDS still answer the whole
   * set (state of the world). The responses are the same as without `changed`.
   *
   * Answered at once, an array and no promise, when `typeUrls` is not given, no call is pending
   * and the push itself answers every type it touches (EDS/RDS: the change feed carries the
   * changed names' versions and bytes; LDS/CDS, which answer the whole set, and a first answer
   * still held need the store), versions hashed synchronously. Else a promise.
   */
  onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): DiscoveryResponse[] | Promise<DiscoveryResponse[]>;
  /** The Node of the first request that carried one. */
  node(): Node | undefined;
  /** The stream's current status (plain data). */
  status(): ProxyStatus;
}

/**
 * Creates the session of one stream. Calls are serialized: each onRequest/onPush runs after the
 * previous one finished (one answered at once only when none is pending), so the transport may
 * call them concurrently and must write the responses in the order the calls return or resolve.
 */
export function createSotwSession(options: SotwSessionOptions): SotwSession {
  const { source } = options;
  const gate = options.gate ?? openGate;
  const nextNonce = options.nonce ?? createNonces();
  const states = new Map<string, SotwTypeState>();
  let node: Node | undefined;
  const serialized = createSerial();

  async function resolve(state: SotwTypeState, from: ResourceSource = source): Promise<StoredResource[]> {
    if (state.wildcard) return from.list(state.typeUrl);
    if (state.names.size === 0) return [];
    return from.get(state.typeUrl, [...state.names].sort());
  }

  const budget = options.maxResponseBytes ?? defaultMaxResponseBytes;

  async function answer(
    state: SotwTypeState,
    resources: StoredResource[],
    only?: ReadonlySet<string>,
  ): Promise<DiscoveryResponse[]> {
    const splittable = !wildcardTypes.has(state.typeUrl);
    const who = logSafe(node?.id ?? "");
    let a: Awaited<ReturnType<typeof sotwAnswer>>;
    try {
      a = await sotwAnswer(state.typeUrl, resources, nextNonce, { budget, splittable, only });
    } catch (e) {
      if (e instanceof ResponseTooLargeError && options.log)
        logWarn(
          options.log,
          `xds: sotw ${shortType(state.typeUrl)} answer for ${who} is ${e.bytes} bytes, over ` +
            `EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; cannot be split, stream refused with ResourceExhausted`,
        );
      throw e;
    }
    if (splittable) logOversized(resources);
    return record(state, a);
  }

  /** Names each resource too large for any response alone (EDS/RDS send it alone). */
  function logOversized(resources: readonly StoredResource[]): void {
    const who = logSafe(node?.id ?? "");
    for (const r of oversized(resources, sotwResourceBytes, budget))
      options.log?.(
        `xds: sotw ${shortType(r.typeUrl)} ${logSafe(r.name)} for ${who} is ${sotwResourceBytes(r)} bytes, ` +
          `over EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; sent alone in its own response`,
      );
  }

  /** `a` is the answer the client now has (or is about to); its responses go out. */
  function record(state: SotwTypeState, a: SotwAnswer): DiscoveryResponse[] {
    const nonces = a.responses.map((r) => r.nonce);
    state.returned = a.versions;
    noteLast(state, nonces.at(-1) ?? "", a.versionInfo);
    state.nonces = nonces;
    state.nacked = false;
    state.waiting = undefined;
    state.missingHeld = undefined;
    return a.responses;
  }

  /**
   * An EDS/RDS push answered from `touched` (the push's changes of subscribed names): only those
   * names are read (from the feed when it carries them), `returned` is updated in place and its
   * set version follows in O(changed). Nothing when the client already holds all of it.
   */
  async function answerChanges(
    state: SotwTypeState,
    touched: readonly string[],
    from: ResourceSource,
  ): Promise<DiscoveryResponse[]> {
    const carried = takeChanges(state, touched, await from.get(state.typeUrl, touched));
    return carried ? changesAnswer(state, carried, await state.returned.version()) : [];
  }

  /** The responses carrying `carried` at `versionInfo` (the updated `returned`'s set version), recorded. */
  function changesAnswer(
    state: SotwTypeState,
    carried: StoredResource[],
    versionInfo: string,
  ): DiscoveryResponse[] {
    logOversized(carried);
    const responses = sotwPieces(state.typeUrl, carried, versionInfo, nextNonce, {
      budget,
      splittable: true,
    });
    return record(state, { responses, versionInfo, versions: state.returned });
  }

  /**
   * Whether answering `resources` now could make the client drop something it holds, or would
   * only tell it that names it asked for do not exist (start-up; the latter is marked missingHeld,
   * answered on the first push after sync).
   */
  async function mustHold(state: SotwTypeState, resources: StoredResource[]): Promise<boolean> {
    if (await gate.synced()) return false;
    if (answersOnlyMissing(state, resources)) {
      state.missingHeld = true;
      return true;
    }
    if (state.last === undefined) {
      if (state.waiting === undefined) return false;
      const { versions } = uniqueByName(resources);
      const version = await setVersion([...versions].map(([name, v]) => ({ name, version: v })));
      return version !== state.waiting;
    }
    if (!wildcardTypes.has(state.typeUrl)) return false; // an RDS/EDS omission removes nothing
    const now = new Set(resources.map((r) => r.name));
    for (const name of state.returned.keys())
      if (!now.has(name) && (state.wildcard || state.names.has(name))) return true;
    return false;
  }

  /** The answer to `state` now, or none while it must be held. */
  async function answerUnlessHeld(state: SotwTypeState): Promise<DiscoveryResponse[]> {
    const resources = await resolve(state);
    return (await mustHold(state, resources)) ? [] : answer(state, resources);
  }

  /** After a NACK the status itself (its message is logged at once); after an ACK a read of it. */
  function emitStatus(nacked: boolean) {
    if (!options.onStatus) return;
    options.onStatus(nacked ? status(recordBounds.names) : () => status(recordBounds.names));
  }

  /** The status; `bound` cuts each list (see status-lists.ts): onStatus reports recordBounds.names. */
  function status(bound?: number): ProxyStatus {
    return streamStatus(node, states.values(), (s) => subscriptionStatus(s, bound));
  }

  async function onRequest(req: DiscoveryRequest): Promise<DiscoveryResponse[]> {
    if (node === undefined && req.node !== undefined) node = retainedNode(req.node);
    if (req.typeUrl === "") return [];
    let state = states.get(req.typeUrl);
    if (!state) {
      state = newSotwState(req.typeUrl);
      states.set(req.typeUrl, state);
    }
    if (req.responseNonce !== "" && state.last) {
      // Only the latest answer (any of its pieces) may be ACKed or NACKed; anything older is superseded.
      const piece = state.nonces.indexOf(req.responseNonce);
      if (piece < 0) return [];
      const lastPiece = settleAnswer(state, req, piece);
      const changed = subscribe(state, req.resourceNames);
      // An earlier piece's ACK changes no status: the answer is ACKed with its last piece.
      if (req.errorDetail || lastPiece) emitStatus(req.errorDetail !== undefined);
      return changed ? answerUnlessHeld(state) : [];
    }
    // The first request for this type on this stream (a nonce we never sent for it means the
    // proxy reconnected from another stream): always answered, even with no resources, unless
    // it holds a version and the registry is not synced yet (then on the first push after).
    subscribe(state, req.resourceNames);
    if (req.versionInfo !== "") state.ackedVersion = req.versionInfo;
    state.waiting = req.versionInfo === "" ? undefined : req.versionInfo;
    return answerUnlessHeld(state);
  }

  /** onRequest's answer at once (see SotwSession.onRequest), or undefined having changed nothing. */
  function requestNow(req: DiscoveryRequest): DiscoveryResponse[] | undefined {
    if (!serialized.idle || (node === undefined && req.node !== undefined)) return undefined;
    if (req.typeUrl === "") return [];
    const state = states.get(req.typeUrl);
    if (!state?.last || req.responseNonce === "") return undefined;
    const piece = state.nonces.indexOf(req.responseNonce);
    if (piece < 0) return [];
    // An ACK repeats the subscription; one that changes it is answered by onRequest.
    if (!subscribedAlready(state, req.resourceNames)) return undefined;
    if (settleAnswer(state, req, piece) || req.errorDetail) emitStatus(req.errorDetail !== undefined);
    return [];
  }

  /** onPush's answer at once (see SotwSession.onPush), or undefined having changed nothing. */
  function pushNow(changed?: readonly ResourceChange[]): DiscoveryResponse[] | undefined {
    if (!changed || !serialized.idle || !versionsHashedNow()) return undefined;
    const index = indexChanges(changed);
    const answers: { state: SotwTypeState; touched: string[]; found: StoredResource[] }[] = [];
    // Nothing changes before every type's answer is known to come from the push alone.
    for (const typeUrl of pushOrder) {
      const state = states.get(typeUrl);
      if (!state) continue;
      // A held answer (as onPush) reads the store: the push may carry a name it lacked.
      if (state.missingHeld) return undefined;
      if (!state.last) {
        if (state.waiting !== undefined) return undefined; // a held first answer reads the store
        continue;
      }
      const touched = touchedBy(state, index);
      if (touched.length === 0) continue;
      // LDS/CDS answer the whole set (read from the store); an unhashed version waits for a promise.
      if (wildcardTypes.has(typeUrl) || state.returned.versionNow() === undefined) return undefined;
      const found = changedNow(index.get(typeUrl), touched.sort());
      if (!found) return undefined;
      answers.push({ state, touched, found });
    }
    const out: DiscoveryResponse[] = [];
    for (const { state, touched, found } of answers) {
      const carried = takeChanges(state, touched, found);
      // Hashed synchronously (versionsHashedNow) and at hand before: at hand after every set and delete.
      if (carried) out.push(...changesAnswer(state, carried, state.returned.versionNow() as string));
    }
    return out;
  }

  async function onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): Promise<DiscoveryResponse[]> {
    const out: DiscoveryResponse[] = [];
    // What the push changed answers for itself (version and bytes): no store read for those names.
    const index = changed && indexChanges(changed);
    const from = index ? changeSource(source, index) : source;
    for (const typeUrl of pushOrder) {
      if (typeUrls && !typeUrls.includes(typeUrl)) continue;
      const state = states.get(typeUrl);
      if (!state) continue;
      if (state.missingHeld) {
        out.push(...(await answerUnlessHeld(state)));
        continue;
      }
      if (!state.last) {
        if (state.waiting !== undefined) out.push(...(await answerUnlessHeld(state)));
        continue;
      }
      if (index) {
        const touched = touchedBy(state, index);
        if (touched.length === 0) continue;
        if (!wildcardTypes.has(typeUrl)) {
          out.push(...(await answerChanges(state, touched, from)));
          continue;
        }
      }
      const resources = await resolve(state, from);
      const sent = state.returned;
      if (sameVersions(sent, resources)) continue;
      if (await mustHold(state, resources)) continue;
      // RDS and EDS are not state-of-the-world: a push carries only what changed (as Istio's
      // incremental EDS does); LDS and CDS responses must carry every resource.
      const only = wildcardTypes.has(typeUrl)
        ? undefined
        : new Set(resources.filter((r) => sent.get(r.name) !== r.version).map((r) => r.name));
      out.push(...(await answer(state, resources, only)));
    }
    return out;
  }

  return {
    onRequest: (req) => requestNow(req) ?? serialized(() => onRequest(req)),
    onPush: (typeUrls, changed) =>
      (typeUrls === undefined ? pushNow(changed) : undefined) ?? serialized(() => onPush(typeUrls, changed)),
    node: () => node,
    status: () => status(),
  };
}
