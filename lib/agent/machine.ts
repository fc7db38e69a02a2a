/**
 * The agent's upstream as a pure step function (as lib/relay/kind-machine.ts): what happened in,
 * the next state and the actions to take out. The driver (functions/node/agent-runtime.ts) runs
 * one upstream Delta ADS stream at a time, tagged with `op`; an input about an older op is stale
 * and ignored, so a late response of a stream that was cut can never reach the cache.
 *
 * Last good configuration by construction: the cache changes only by what an upstream response
 * carries (a changed version, or a name in removed_resources that the cache holds); a stream that
 * ends changes nothing; every new stream says what the cache holds (initial_resource_versions), so
 * an upstream that publishes the same resources resends nothing and removes nothing.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { logSafe } from "../log-safe.ts";
import { type BackoffOptions, backoffDelay } from "../relay/backoff.ts";
import { addDemand, type Demand, type TypeDemand } from "./demand.ts";
import { nack } from "./nack.ts";
import {
  ackOf,
  callOf,
  servedTypes,
  subscriptionOf,
  subscriptions,
  typeOrder,
  type UpstreamRequest,
} from "./requests.ts";
import {
  afterWatchEnded,
  defaultTransportOptions,
  initialTransport,
  retryWatch,
  type Transport,
  type TransportOptions,
  type TransportState,
  transportName,
  type UpstreamProtocol,
  watchDue,
} from "./transport.ts";

export type { UpstreamRequest } from "./requests.ts";

/** Where the upstream is: no stream yet (nobody asked), one stream open, waiting to retry, stopped. */
export type UpstreamPhase = "idle" | "streaming" | "waiting" | "stopped";

/** The agent's state: the upstream stream, what local proxies want, what the cache holds. */
export interface AgentState {
  phase: UpstreamPhase;
  /** The id of the stream (or wait) in progress; inputs naming another op are stale. */
  op: number;
  /** Consecutive failed streams, for backoff; reset by a response or a stream that lived long. */
  failures: number;
  /** When the current stream opened (ms). */
  openedAt: number;
  /**
   * What the log last said of the upstream, so a line is written per state change and not per
   * retry: the last failure's reason ("" once healthy), whether the stream before this one
   * connected, whether the token changed since the last stream opened.
   */
  told: { failure: string; reachedBefore: boolean; reached: boolean; newToken: boolean };
  /** The node sent upstream: the first local proxy's (id, metadata, locality). */
  node: Node | undefined;
  /** What local proxies asked for, per type URL: the union, kept for the agent's life. */
  demand: Demand;
  /** What the current stream subscribed to, per type URL. */
  sent: Demand;
  /** The cache: type URL ─▶ name ─▶ version. */
  held: Map<string, Map<string, string>>;
  /** The last upstream response per type URL not yet ACKed or NACKed: its nonce and when to ACK it. */
  pendingAck: Map<string, { nonce: string; due: number }>;
  /** True once a first upstream response was cached (GET /ready). */
  ready: boolean;
  /** The type URLs an upstream response was cached for since the agent started. */
  answered: ReadonlySet<string>;
  /** Delta ADS, or Connect Watch/Poll (one call per type URL), and the Watch ─▶ Poll fallback (transport.ts). */
  transport: TransportState;
}

/** One resource of an upstream response: name, version and the encoded resource. */
export interface UpstreamResource {
  name: string;
  version: string;
  body: Uint8Array;
}

/** What happened: local proxies' asks, driver results (tagged with their op), timers, commands. */
export type AgentInput =
  | { type: "demand"; node: Node; typeUrl: string; names: readonly string[]; wildcard: boolean }
  | { type: "connected"; op: number; now: number }
  | {
      type: "response";
      op: number;
      now: number;
      typeUrl: string;
      nonce: string;
      resources: readonly UpstreamResource[];
      removed: readonly string[];
    }
  | { type: "ended"; op: number; now: number; code: string; message: string }
  | { type: "timer"; op: number }
  | { type: "tick"; now: number }
  | { type: "nack"; nodeId: string; typeUrl: string; code: number; message: string }
  | { type: "tokenChanged" }
  | { type: "stop" };

/** What to do, in order. `open` and `wait` end the stream in progress first. */
export type AgentAction =
  | { do: "open"; op: number; transport: Transport }
  | { do: "send"; op: number; request: UpstreamRequest }
  | { do: "cache"; typeUrl: string; upserts: UpstreamResource[]; removed: string[] }
  | { do: "wait"; op: number; ms: number }
  | { do: "ackAt"; at: number }
  | { do: "close" }
  | { do: "log"; line: string };

/** Tunables, and the sources of time and randomness, of step(). */
export interface AgentContext {
  backoff: BackoffOptions;
  random: () => number;
  /** How long an upstream response waits for a local proxy's NACK before it is ACKed (ms). */
  ackDelayMs: number;
  /** A stream that ends after living this long counts as healthy: its retry starts from the first delay. */
  healthyStreamMs: number;
  /** The upstream's address, for log lines. */
  upstream: string;
  /** Where the token comes from, for the log line of a refused token ("" without a token). */
  tokenSource: string;
  /** The Watch ─▶ Poll fallback rule (default defaultTransportOptions). */
  transport?: TransportOptions;
}

/**
 * The state of an agent that has not connected; `protocol` as configured (default ads). `held`
 * seeds the cache's versions with what a disk cache held (EDGEPILOT_AGENT_CACHE_DIR), so the first
 * upstream stream sends them as initial_resource_versions and an upstream publishing the same
 * resources resends nothing. It does not make the agent `ready` nor any type `answered`: removals
 * still wait for the upstream.
 */
export function initialAgentState(
  protocol: UpstreamProtocol = "ads",
  held: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(),
): AgentState {
  return {
    phase: "idle",
    op: 0,
    failures: 0,
    openedAt: 0,
    told: { failure: "", reachedBefore: false, reached: false, newToken: false },
    node: undefined,
    demand: new Map(),
    sent: new Map(),
    held: new Map([...held].map(([typeUrl, versions]) => [typeUrl, new Map(versions)])),
    pendingAck: new Map(),
    ready: false,
    answered: new Set(),
    transport: initialTransport(protocol),
  };
}

/**
 * Whether local proxies may be told to remove what they hold (the local sessions' sync gate): only
 * once the upstream answered every type they ask for. Before that the cache of a type is not the
 * upstream's yet (a restarted agent holds nothing), and an empty answer would empty a proxy that
 * reconnected holding its configuration.
 */
export function removalsAllowed(s: AgentState): boolean {
  if (!s.ready) return false;
  for (const typeUrl of s.demand.keys()) if (!s.answered.has(typeUrl)) return false;
  return true;
}

type Step = [AgentState, AgentAction[]];

/** Advances the agent by one input. Never throws; stale inputs leave the state unchanged. */
export function step(s: AgentState, input: AgentInput, ctx: AgentContext): Step {
  if (s.phase === "stopped") return [s, []];
  if ("op" in input && input.op !== s.op) return [s, []];
  switch (input.type) {
    case "demand": {
      // Only the types the upstream serves: it refuses a whole Delta stream asking for another.
      if (!servedTypes.has(input.typeUrl)) return [s, []];
      const node = s.node ?? input.node;
      const demand = addDemand(s.demand, input.typeUrl, input.names, input.wildcard);
      const next = { ...s, node, demand };
      if (s.phase === "idle") return open(next, ctx, 0);
      if (s.phase !== "streaming") return [next, []];
      return s.transport.current === "ads" ? subscribeMore(next, input.typeUrl) : recall(next, input.typeUrl);
    }
    case "connected": {
      // During a run of failures, said only when it is news: reachable again, or a new token.
      const t = s.told;
      const news = s.failures === 0 || !t.reachedBefore || t.newToken;
      const line = `agent: upstream ${ctx.upstream}: connected${t.newToken && s.failures > 0 ? " with the new token" : ""}`;
      const told = { ...t, reached: true, newToken: false };
      return [{ ...s, openedAt: input.now, told }, news ? [{ do: "log", line }] : []];
    }
    case "response":
      return response(s, input, ctx);
    case "ended":
      return ended(s, input, ctx);
    case "timer":
      return s.phase === "waiting" ? open(s, ctx, s.failures) : [s, []];
    case "tokenChanged": {
      // A refused token rewritten: try it now rather than at the end of the backoff.
      const next = { ...s, told: { ...s.told, newToken: true } };
      return s.phase === "waiting" ? open(next, ctx, s.failures) : [next, []];
    }
    case "tick":
      return acks(s, input.now);
    case "nack":
      return nack(s, input);
    case "stop":
      return [{ ...s, phase: "stopped", pendingAck: new Map() }, [{ do: "close" }]];
  }
}

/** A new stream: the node, then per type what local proxies want and what the cache holds. */
function open(s: AgentState, ctx: AgentContext, failures: number): Step {
  const op = s.op + 1;
  const transport = s.transport.current;
  const actions: AgentAction[] = [{ do: "open", op, transport }];
  // Retries are not news: their failures are (ended()).
  const over = transport === "ads" ? "" : ` (${transportName(transport)})`;
  if (failures === 0) actions.push({ do: "log", line: `agent: upstream ${ctx.upstream}: connecting${over}` });
  const sent = new Map<string, TypeDemand>();
  let node = s.node;
  for (const typeUrl of typeOrder(s.demand)) {
    const want = s.demand.get(typeUrl) as TypeDemand;
    sent.set(typeUrl, { wildcard: want.wildcard, names: new Set(want.names) });
    if (transport !== "ads") {
      actions.push({ do: "send", op, request: callOf(typeUrl, want, s.held.get(typeUrl), s.node) });
      continue;
    }
    const held = s.held.get(typeUrl);
    const initial = held ? Object.fromEntries(held) : {};
    for (const request of subscriptions(typeUrl, subscriptionOf(want), initial, node)) {
      actions.push({ do: "send", op, request });
    }
    node = undefined;
  }
  const told = { ...s.told, reachedBefore: s.told.reached, reached: false };
  return [
    { ...s, phase: "streaming", op, failures, openedAt: 0, told, sent, pendingAck: new Map() },
    actions,
  ];
}

/** Asks the open stream for what local proxies want of `typeUrl` and it does not have yet. */
function subscribeMore(s: AgentState, typeUrl: string): Step {
  const want = s.demand.get(typeUrl);
  if (!want) return [s, []];
  const had = s.sent.get(typeUrl);
  const more: string[] = [];
  if (want.wildcard && !had?.wildcard) more.push("*");
  for (const n of want.names) if (!had?.names.has(n)) more.push(n);
  if (more.length === 0) return [s, []];
  const sent = new Map<string, TypeDemand>(s.sent);
  sent.set(typeUrl, { wildcard: want.wildcard, names: new Set(want.names) });
  const held = had ? undefined : s.held.get(typeUrl);
  const initial = held ? Object.fromEntries(held) : {};
  const actions: AgentAction[] = subscriptions(typeUrl, more, initial, undefined).map((request) => ({
    do: "send",
    op: s.op,
    request,
  }));
  return [{ ...s, sent }, actions];
}

/** Connect: restarts the call of `typeUrl` when local proxies want more of it than it asks for. */
function recall(s: AgentState, typeUrl: string): Step {
  const want = s.demand.get(typeUrl);
  const had = s.sent.get(typeUrl);
  if (!want || (had && had.names.size === want.names.size && had.wildcard === want.wildcard)) return [s, []];
  const sent = new Map<string, TypeDemand>(s.sent);
  sent.set(typeUrl, { wildcard: want.wildcard, names: new Set(want.names) });
  const request = callOf(typeUrl, want, s.held.get(typeUrl), s.node);
  return [{ ...s, sent }, [{ do: "send", op: s.op, request }]];
}

/** Caches what a response changed, and waits `ackDelayMs` for a local NACK before ACKing it. */
function response(s: AgentState, r: Extract<AgentInput, { type: "response" }>, ctx: AgentContext): Step {
  const before = s.held.get(r.typeUrl) ?? new Map<string, string>();
  const versions = new Map(before);
  const upserts: UpstreamResource[] = [];
  for (const res of r.resources) {
    if (versions.get(res.name) === res.version) continue;
    versions.set(res.name, res.version);
    upserts.push(res);
  }
  // Only a removal the upstream published reaches the cache, and only of a name it holds.
  const removed = r.removed.filter((n) => versions.delete(n));
  const held = new Map(s.held);
  held.set(r.typeUrl, versions);
  const ads = s.transport.current === "ads";
  const pendingAck = new Map(s.pendingAck);
  const due = r.now + ctx.ackDelayMs;
  // Poll and Watch have nothing to ACK: a PollRequest carries no nonce.
  if (ads) pendingAck.set(r.typeUrl, { nonce: r.nonce, due });
  const actions: AgentAction[] = [];
  if (upserts.length > 0 || removed.length > 0)
    actions.push({ do: "cache", typeUrl: r.typeUrl, upserts, removed });
  if (!s.ready) {
    actions.push({ do: "log", line: `agent: upstream ${ctx.upstream}: first configuration cached; ready` });
  }
  if (ads) actions.push({ do: "ackAt", at: due });
  const answered = s.answered.has(r.typeUrl) ? s.answered : new Set([...s.answered, r.typeUrl]);
  const told = { ...s.told, failure: "" };
  const next = { ...s, held, pendingAck, ready: true, answered, failures: 0, told };
  if (s.transport.current !== "poll") return [next, actions];
  const o = ctx.transport ?? defaultTransportOptions;
  if (watchDue(s.transport, r.now)) {
    const retry = retryWatch(o);
    actions.push({ do: "log", line: `agent: upstream ${ctx.upstream}: ${retry.line}` });
    const [opened, more] = open({ ...next, transport: retry.next }, ctx, 0);
    return [opened, [...actions, ...more]];
  }
  // The next long poll of this type, holding what this one brought.
  const want = s.demand.get(r.typeUrl);
  if (want) actions.push({ do: "send", op: s.op, request: callOf(r.typeUrl, want, versions, s.node) });
  return [next, actions];
}

/** ACKs every response whose NACK window passed. */
function acks(s: AgentState, now: number): Step {
  if (s.phase !== "streaming" || s.pendingAck.size === 0) return [s, []];
  const pendingAck = new Map(s.pendingAck);
  const actions: AgentAction[] = [];
  let next = Number.POSITIVE_INFINITY;
  for (const [typeUrl, p] of s.pendingAck) {
    if (p.due > now) {
      next = Math.min(next, p.due);
      continue;
    }
    pendingAck.delete(typeUrl);
    actions.push({ do: "send", op: s.op, request: ackOf(typeUrl, p.nonce) });
  }
  if (next !== Number.POSITIVE_INFINITY) actions.push({ do: "ackAt", at: next });
  return [{ ...s, pendingAck }, actions];
}

/** The stream ended: the cache stays as it is; retry after a jittered backoff. */
function ended(s: AgentState, e: Extract<AgentInput, { type: "ended" }>, ctx: AgentContext): Step {
  if (s.phase !== "streaming") return [s, []];
  const livedMs = s.openedAt > 0 ? e.now - s.openedAt : 0;
  const switched = afterWatchEnded(
    s.transport,
    { ...e, connected: s.openedAt > 0, livedMs },
    ctx.transport ?? defaultTransportOptions,
  );
  const healthy = (s.openedAt > 0 && livedMs >= ctx.healthyStreamMs) || switched.line !== undefined;
  const attempt = healthy ? 0 : s.failures;
  const ms = backoffDelay(attempt, ctx.backoff, ctx.random);
  const op = s.op + 1;
  const why =
    e.code === "unauthenticated"
      ? `the upstream refused the token (UNAUTHENTICATED: ${logSafe(e.message)})${
          ctx.tokenSource
            ? `; check ${ctx.tokenSource}, it is re-read when it changes`
            : "; no token is configured"
        }`
      : `stream ended (${e.code}: ${logSafe(e.message)})`;
  const failures = attempt + 1;
  const reason = `${e.code}: ${e.message}`;
  // The same failure again is said at the 1st, 2nd, 4th, 8th... attempt, not at every retry.
  const news = reason !== s.told.failure || (failures & (failures - 1)) === 0;
  const count = failures > 1 ? ` (${failures} failed attempts)` : "";
  const kept = ` local proxies keep the cached configuration; retrying in ${ms}ms`;
  const actions: AgentAction[] = [{ do: "close" }, { do: "wait", op, ms }];
  if (news) actions.push({ do: "log", line: `agent: upstream ${ctx.upstream}: ${why}${count};${kept}` });
  if (switched.line) actions.push({ do: "log", line: `agent: upstream ${ctx.upstream}: ${switched.line}` });
  return [
    {
      ...s,
      transport: switched.next,
      phase: "waiting",
      op,
      failures,
      told: { ...s.told, failure: reason },
      sent: new Map(),
      pendingAck: new Map(),
    },
    actions,
  ];
}
