/**
 * DeltaPollService's behaviour, runtime-neutral: Poll (optionally a long poll) and Watch, over a
 * ResourceSource and a PollHub that the runtime's debounce driver publishes pushes to.
 *
 * Long poll: an answer with something to send or remove is returned at once; an answer with
 * nothing new is held until a push changes a resource in the client's reach, then recomputed
 * (still against what the request holds), or until the wait ends (the empty answer). A
 * subscribed name that does not exist is reported in every answer's removed_resources but does
 * not by itself cut a wait short: a stateless client cannot say it already knows, and would spin.
 * Watch: the Poll answer first, then one delta per push that changes anything for this client,
 * each relative to what the stream has sent (names reported absent are not reported again).
 *
 * Byte budget (EDGEPILOT_MAX_RESPONSE_BYTES): a Watch delta over it is yielded as several
 * responses, resources first, removals with or after the last. A Poll answers only the first
 * piece of such a delta (a unary call has one answer); the client's next poll, holding what it
 * got, fetches the rest. A long poll returns that first piece at once.
 */

import { seconds } from "../clock.ts";
import type { XdsReporter } from "../core/hooks.ts";
import type { DeltaDiscoveryResponse } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openGate, type SyncGate } from "../resources/sync-gate.ts";
import { type ClientView, deltaStep, initialView } from "./poll.ts";
import type { Interest, PollHub } from "./poll-hub.ts";
import {
  type PollNackReport,
  type PollQuery,
  type PollRequestLike,
  pollNackReport,
  readPollRequest,
} from "./poll-request.ts";
import type { ResourceSource } from "./source.ts";
import type { NodeView, Views } from "./view-source.ts";

/** A timer as a signal that aborts after `ms`; `cancel` frees it early. Injected in tests. */
export type Timeout = (ms: number) => { signal: AbortSignal; cancel(): void };

/** What the server reads from and listens to; `limits` as parsed by lib/config.ts. */
export interface PollServerDeps {
  source: ResourceSource;
  hub: PollHub;
  limits: { maxNamesPerRequest: number; maxStreams: number; maxResponseBytes?: number };
  /** Aborted on shutdown: waiting polls answer what they have, Watch streams end. */
  shutdown?: AbortSignal;
  timeout?: Timeout;
  /**
   * Start-up sync: while closed, held names are not removed (a long poll with only such news
   * keeps waiting). The runtime publishes a wake-all to the hub when it opens.
   */
  gate?: SyncGate;
  /**
   * Per-namespace views (view-source.ts): each call reads through its request node's view, and is
   * woken only by the pushes that concern it. Absent: every call reads the shared resources.
   */
  views?: Views;
  /**
   * Told of each valid request's NACK (request.error_detail) before it is answered, to record in
   * the node's proxy status (lib/core/poll-nack.ts); the answer does not wait for it.
   */
  onNack?: (nack: PollNackReport) => void;
  /**
   * Where calls report (the mesh core's `xds`, metrics): each Watch opened and closed, each
   * response answered (Poll and Watch) and each NACK.
   */
  xds?: XdsReporter;
}

/** Why a Poll or Watch was refused: `invalid` request, or `exhausted` (EDGEPILOT_MAX_STREAMS). */
export class PollRefusedError extends Error {
  constructor(
    readonly reason: "invalid" | "exhausted",
    message: string,
  ) {
    super(message);
    this.name = "PollRefusedError";
  }
}

/** Per call: when the caller is gone, and how long it can wait. */
export interface PollCallOptions {
  /** The client is gone (or its deadline passed). */
  signal: AbortSignal;
  /** The longest this caller can wait for an answer, e.g. the client's own deadline (ms). */
  maxWaitMs?: number;
}

/** Poll and Watch, with EDGEPILOT_MAX_STREAMS applied to what waits. */
export interface PollServer {
  /** One answer; held up to the request's `wait` when it would be empty. Throws PollRefusedError. */
  poll(input: PollRequestLike, options: PollCallOptions): Promise<DeltaDiscoveryResponse>;
  /** The Poll answer, then a delta per relevant push until `signal` or shutdown. Throws PollRefusedError. */
  watch(input: PollRequestLike, options: PollCallOptions): AsyncGenerator<DeltaDiscoveryResponse>;
  /** Open Watch streams plus waiting polls: what EDGEPILOT_MAX_STREAMS bounds. */
  readonly open: number;
}

/** Creates the server; open streams and waiting polls share one EDGEPILOT_MAX_STREAMS budget. */
export function createPollServer(deps: PollServerDeps): PollServer {
  const timeout = deps.timeout ?? realTimeout;
  const gate = deps.gate ?? openGate;
  const step = async (source: ResourceSource, query: PollQuery, view: ClientView) =>
    deltaStep(source, query, view, await gate.synced(), deps.limits.maxResponseBytes);
  let open = 0;
  const read = (input: PollRequestLike): PollQuery => {
    const r = readPollRequest(input, deps.limits.maxNamesPerRequest);
    if (!r.ok) throw new PollRefusedError("invalid", r.message);
    if (r.query.nack) deps.xds?.nack(r.query.typeUrl);
    const nack = deps.onNack && pollNackReport(r.query, input.request?.node);
    if (nack) deps.onNack?.(nack);
    return r.query;
  };
  const take = (what: string): (() => void) => {
    if (open >= deps.limits.maxStreams)
      throw new PollRefusedError(
        "exhausted",
        `${what} refused: this instance already holds ${open} open Watch streams and waiting polls ` +
          `(EDGEPILOT_MAX_STREAMS=${deps.limits.maxStreams}); retry later, or poll without wait`,
      );
    open++;
    let released = false;
    return () => {
      if (!released) open--;
      released = true;
    };
  };

  // A response handed to the transport, `since` the call (or its wake-up) began answering; a Watch
  // says how long the transport took to take it (`at`: when it was yielded), a Poll cannot.
  const answered = (response: DeltaDiscoveryResponse, since: number, at?: number) => {
    const end = seconds();
    deps.xds?.response(response.typeUrl, end - since, at === undefined ? undefined : end - at);
    return response;
  };
  const { views } = deps;
  // A call's view is looked up at its start and after each wake-up (a push may have changed it).
  const through = (view: NodeView | undefined, source: ResourceSource) =>
    views && view ? views.source(view, source) : source;
  const listen = (query: PollQuery, view: { current: NodeView | undefined }) => {
    const interest = interestOf(query);
    return deps.hub.listen(
      (c) =>
        views && view.current
          ? views.concerns(view.current, c) && (interest(c) || c.name === "" || views.wakes(view.current))
          : interest(c),
      () => views !== undefined && view.current !== undefined && views.wakes(view.current),
    );
  };

  return {
    async poll(input, options) {
      let since = seconds();
      const query = read(input);
      const view = { current: undefined as NodeView | undefined };
      const listener = listen(query, view);
      try {
        if (views) view.current = await views.forNode(input.request?.node);
        const first = await step(through(view.current, deps.source), query, initialView(query));
        const waitMs = Math.min(query.waitMs, options.maxWaitMs ?? Number.POSITIVE_INFINITY);
        if (first.changed || waitMs <= 0) return answered(first.response, since);
        const release = take("long poll");
        const timer = timeout(waitMs);
        const until = anySignal([options.signal, timer.signal, deps.shutdown]);
        try {
          for (;;) {
            const snapshot = await listener.next(until.signal);
            if (!snapshot) return answered(first.response, since);
            since = seconds();
            if (views) view.current = await views.forNode(input.request?.node);
            const next = await step(through(view.current, snapshot), query, initialView(query));
            if (next.changed) return answered(next.response, since);
          }
        } finally {
          until.dispose();
          timer.cancel();
          release();
        }
      } finally {
        listener.close();
      }
    },

    async *watch(input, options) {
      let since = seconds();
      const query = read(input);
      const release = take("Watch");
      const version = istioVersion(input.request?.node?.metadata?.ISTIO_VERSION);
      deps.xds?.streamOpened("watch", version);
      const viewOfCall = { current: undefined as NodeView | undefined };
      const listener = listen(query, viewOfCall);
      const stop = anySignal([options.signal, deps.shutdown]);
      try {
        if (views) viewOfCall.current = await views.forNode(input.request?.node);
        const first = await step(through(viewOfCall.current, deps.source), query, initialView(query));
        for (const r of first.responses) {
          const at = seconds();
          yield r;
          answered(r, since, at);
        }
        let view = first.view;
        for (;;) {
          const snapshot: ResourceSource | undefined = await listener.next(stop.signal);
          if (!snapshot) return;
          since = seconds();
          if (views) viewOfCall.current = await views.forNode(input.request?.node);
          const next = await step(through(viewOfCall.current, snapshot), query, view);
          // Absent names were all reported in the first answer; later ones are held names removed.
          if (!next.changed) continue;
          view = next.view;
          for (const r of next.responses) {
            const at = seconds();
            yield r;
            answered(r, since, at);
          }
          deps.xds?.converged(Date.now());
        }
      } finally {
        stop.dispose();
        listener.close();
        release();
        deps.xds?.streamClosed("watch", version);
      }
    },

    get open() {
      return open;
    },
  };
}

/** A node's ISTIO_VERSION metadata as the pilot_xds label takes it ("" when absent or not a string). */
function istioVersion(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** A push matters to a query when it changes a resource of its type within its reach. */
export function interestOf(query: Pick<PollQuery, "typeUrl" | "sub">): Interest {
  const { typeUrl, sub } = query;
  return (c) => c.typeUrl === typeUrl && (sub.wildcard || sub.names.has(c.name));
}

const realTimeout: Timeout = (ms) => {
  const c = new AbortController();
  const t = setTimeout(() => c.abort(), ms);
  return { signal: c.signal, cancel: () => clearTimeout(t) };
};

/** A signal aborted when any of `signals` is; `dispose` detaches it (the shutdown signal lives long). */
function anySignal(signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose(): void } {
  const c = new AbortController();
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  const abort = () => c.abort();
  for (const s of present) {
    if (s.aborted) c.abort();
    else s.addEventListener("abort", abort);
  }
  const dispose = () => {
    for (const s of present) s.removeEventListener("abort", abort);
  };
  return { signal: c.signal, dispose };
}
