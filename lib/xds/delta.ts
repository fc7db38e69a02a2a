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
import { logSafe } from "../log-safe.ts";
import type { ResourceChange } from "../push/flush.ts";
import { createSerial } from "../serial.ts";
import {
  defaultMaxResponseBytes,
  deltaResourceBytes,
  oversized,
  planDeltaPieces,
  shortType,
} from "./budget.ts";
import { changeSource, indexChanges } from "./change-source.ts";
import { diffForClient, type Holdings } from "./delta-diff.ts";
import { deltaResponse, removalOrder } from "./delta-response.ts";
import {
  answer,
  applySubscription,
  type DeltaTypeState,
  type InFlight,
  inReach,
  newTypeState,
  sent,
  settleOldest,
} from "./delta-state.ts";
import { createNonces } from "./nonce.ts";
import { recordBounds, type StatusReport } from "./proxy-record.ts";
import { nodeGenerator, retainedNode } from "./sotw.ts";
import type { ResourceSource } from "./source.ts";
import { statusLists } from "./status-lists.ts";
import { openGate, type SyncGate } from "./sync-gate.ts";
import {
  type ProxyStatus,
  type ProxyTypeStatus,
  pushOrder,
  type StoredResource,
  type TypeUrl,
} from "./types.ts";

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
   */
  onRequest(req: DeltaDiscoveryRequest): Promise<DeltaDiscoveryResponse[]>;
  /**
   * Re-reads every subscribed type (or only `typeUrls`) and sends what changed: first the
   * additions and updates of each type in push order (CDS, EDS, LDS, RDS), then the removals of
   * each type, referrers first (LDS, RDS, CDS, EDS). With `changed` (every resource the push
   * changed), only those names in the subscription's reach are re-read and diffed: the same
   * responses at a cost that follows the change, not the subscription.
   */
  onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): Promise<DeltaDiscoveryResponse[]>;
  /** The Node of the first request that carried one. */
  node(): Node | undefined;
  /** The stream's current status (plain data); `sent.versions` is what the client is taken to hold. */
  status(): ProxyStatus;
  /** The names explicitly subscribed for `typeUrl` (for request limits). */
  subscribed(typeUrl: string): ReadonlySet<string>;
}

interface TypeDiff {
  state: DeltaTypeState;
  resources: StoredResource[];
  removed: string[];
}

const none: ReadonlySet<string> = new Set();

/** Unanswered responses kept per type before the oldest count as applied (see settleOldest). */
const maxInFlight = 64;

/**
 * Creates the session of one stream. Calls are serialized: each onRequest/onPush runs after the
 * previous one finished, so the transport may call them concurrently and must write the
 * responses in the order the returned promises resolve.
 */
export function createDeltaSession(options: DeltaSessionOptions): DeltaSession {
  const { source } = options;
  const gate = options.gate ?? openGate;
  const nextNonce = options.nonce ?? createNonces();
  const states = new Map<string, DeltaTypeState>();
  let node: Node | undefined;
  const serialized = createSerial();

  /**
   * What to send and remove for one type; consumes the names the client must hear about again.
   * `only`: the names to look at (a push's changes in reach, and the resend names); default all.
   * `from`: where to read them (a push's change feed over `source`); default `source`.
   */
  async function diff(state: DeltaTypeState, only?: ReadonlySet<string>, from = source): Promise<TypeDiff> {
    const view = state.view;
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
    const d = await diffForClient(from, state.typeUrl, sub, held);
    // No NACKed version and nothing to resend (the usual push): the diff's resources as they are.
    const resources =
      state.resend.size === 0 && state.rejected.size === 0
        ? d.resources
        : d.resources.filter((r) => state.resend.has(r.name) || state.rejected.get(r.name) !== r.version);
    // Nothing missing and nothing to resend: the diff's removals (sorted) are the answer's.
    if (d.missing.length === 0 && state.resend.size === 0) {
      if (d.removed.length === 0 || (await gate.synced())) return { state, resources, removed: d.removed };
      // Not synced yet: what the client holds stays in its view, so the first push after sync removes it.
      return { state, resources, removed: d.removed.filter((name) => !view.has(name)) };
    }
    const sending = new Set(resources.map((r) => r.name));
    const removed = new Set(d.removed);
    // A subscribed name that does not exist is reported once; asked for again, it is reported again.
    // Only explicitly subscribed names are reported missing (`only` may hold wildcard-reached ones).
    for (const name of d.missing)
      if (!state.reportedMissing.has(name) && (!only || state.names.has(name))) removed.add(name);
    for (const name of state.resend) if (!sending.has(name)) removed.add(name);
    state.resend.clear();
    // Not synced yet: what the client holds stays in its view, so the first push after sync removes it.
    if (removed.size > 0 && !(await gate.synced()))
      for (const name of removed) if (view.has(name)) removed.delete(name);
    return { state, resources, removed: [...removed].sort() };
  }

  const budget = options.maxResponseBytes ?? defaultMaxResponseBytes;

  /** The answer as responses under the budget (planDeltaPieces), each tracked in flight on its own. */
  async function send(
    state: DeltaTypeState,
    resources: StoredResource[],
    removed: string[],
  ): Promise<DeltaDiscoveryResponse[]> {
    for (const r of oversized(resources, deltaResourceBytes, budget))
      options.log?.(
        `xds: delta ${shortType(r.typeUrl)} ${logSafe(r.name)} is ${deltaResourceBytes(r)} bytes, over ` +
          `EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; sent alone in its own response`,
      );
    const out: DeltaDiscoveryResponse[] = [];
    for (const piece of planDeltaPieces(resources, removed, budget))
      out.push(await sendOne(state, piece.resources, piece.removed));
    return out;
  }

  async function sendOne(
    state: DeltaTypeState,
    resources: StoredResource[],
    removed: string[],
  ): Promise<DeltaDiscoveryResponse> {
    const nonce = nextNonce();
    const versions = new Map<string, string>();
    for (const r of resources) versions.set(r.name, r.version);
    const flight: InFlight = { nonce, versions, removed };
    sent(state, flight);
    settleOldest(state, maxInFlight);
    for (const r of resources) {
      state.reportedMissing.delete(r.name);
      state.rejected.delete(r.name);
    }
    for (const name of removed) if (state.names.has(name)) state.reportedMissing.add(name);
    const response = deltaResponse(state.typeUrl, resources, removed, nonce, await state.view.version());
    state.last = { nonce, systemVersionInfo: response.systemVersionInfo };
    return response;
  }

  const heldVersion = (state: DeltaTypeState) => state.held.version();

  async function onRequest(req: DeltaDiscoveryRequest): Promise<DeltaDiscoveryResponse[]> {
    if (node === undefined && req.node !== undefined) node = retainedNode(req.node);
    if (req.typeUrl === "") return [];
    let state = states.get(req.typeUrl);
    const first = state === undefined;
    if (!state) {
      state = newTypeState(req.typeUrl, req.initialResourceVersions);
      states.set(req.typeUrl, state);
    }
    // The nonce pairs an ACK/NACK with a response; it never decides whether the subscription
    // changes below are honoured (the document: "should *not* be used to reject stale requests").
    const answered =
      req.responseNonce === ""
        ? ({ kind: "unknown" } as const)
        : answer(state, req.responseNonce, req.errorDetail ? req.errorDetail.message : undefined);
    const changed = applySubscription(state, req.resourceNamesSubscribe, req.resourceNamesUnsubscribe, first);
    if (first && state.held.size > 0) state.ackedVersion = await heldVersion(state);
    if (answered.kind === "ack") {
      state.ackedVersion = await heldVersion(state);
      state.nack = undefined;
    } else if (answered.kind === "nack") {
      const kept = state.ackedVersion === undefined && state.held.size === 0 ? "" : await heldVersion(state);
      state.nack = { versionInfo: kept, nonce: req.responseNonce, message: answered.message };
    }
    // After a NACK the status itself (its message is logged at once); after an ACK a read of it,
    // built only when a record is written (at most once a second per stream).
    if (answered.kind === "nack") options.onStatus?.(status(recordBounds.names));
    else if (answered.kind === "ack") options.onStatus?.(() => status(recordBounds.names));
    if (!changed) return [];
    const d = await diff(state);
    // Envoy's initial fetch of a wildcard type waits for a first response, even an empty one
    // (an empty mesh). A client that said what it holds needs none when nothing differs.
    const mustAnswer = first && state.wildcard && Object.keys(req.initialResourceVersions).length === 0;
    if (d.resources.length === 0 && d.removed.length === 0 && !mustAnswer) return [];
    return send(state, d.resources, d.removed);
  }

  async function onPush(
    typeUrls?: readonly string[],
    changed?: readonly ResourceChange[],
  ): Promise<DeltaDiscoveryResponse[]> {
    const diffs: TypeDiff[] = [];
    // What the push changed answers for itself (version and bytes): no store read for those names.
    const index = changed && indexChanges(changed);
    const from = index ? changeSource(source, index) : source;
    for (const typeUrl of pushOrder) {
      if (typeUrls && !typeUrls.includes(typeUrl)) continue;
      const state = states.get(typeUrl);
      if (!state) continue;
      if (!changed) {
        diffs.push(await diff(state));
        continue;
      }
      // The changed names in reach, and the names to resend; no set when the push misses this type.
      let only = state.resend.size > 0 ? new Set(state.resend) : undefined;
      for (const name of index?.get(typeUrl)?.keys() ?? []) {
        if (!inReach(state, name)) continue;
        only ??= new Set();
        only.add(name);
      }
      if (only !== undefined) diffs.push(await diff(state, only, from));
    }
    // Make before break: every addition and update of every type before any removal.
    const out: DeltaDiscoveryResponse[] = [];
    for (const d of diffs) if (d.resources.length > 0) out.push(...(await send(d.state, d.resources, [])));
    for (const typeUrl of removalOrder) {
      const d = diffs.find((x) => x.state.typeUrl === typeUrl);
      if (d && d.removed.length > 0) out.push(...(await send(d.state, [], d.removed)));
    }
    return out;
  }

  /** The status; `bound` cuts each list (see status-lists.ts): onStatus reports recordBounds.names. */
  function status(bound?: number): ProxyStatus {
    const rank = (t: string) => {
      const i = pushOrder.indexOf(t as TypeUrl);
      return i < 0 ? pushOrder.length : i;
    };
    const types = [...states.values()]
      .sort((a, b) => rank(a.typeUrl) - rank(b.typeUrl) || (a.typeUrl < b.typeUrl ? -1 : 1))
      .map((s) => typeStatus(s, bound));
    return { nodeId: node?.id ?? "", generator: nodeGenerator(node), types };
  }

  return {
    onRequest: (req) => serialized(() => onRequest(req)),
    onPush: (typeUrls, changed) => serialized(() => onPush(typeUrls, changed)),
    node: () => node,
    status: () => status(),
    subscribed: (typeUrl) => states.get(typeUrl)?.names ?? none,
  };
}

function typeStatus(s: DeltaTypeState, bound?: number): ProxyTypeStatus {
  const { subscribed, subscribedCount, sentCount, versions } = statusLists(
    s.names,
    s.last ? s.view : undefined,
    bound,
  );
  const out: ProxyTypeStatus = { typeUrl: s.typeUrl, wildcard: s.wildcard, subscribed };
  if (subscribedCount !== undefined) out.subscribedCount = subscribedCount;
  if (s.last && versions) out.sent = { versionInfo: s.last.systemVersionInfo, nonce: s.last.nonce, versions };
  if (sentCount !== undefined) out.sentCount = sentCount;
  if (s.ackedVersion !== undefined) out.ackedVersion = s.ackedVersion;
  if (s.nack) out.nack = { ...s.nack };
  return out;
}
