/**
 * The list/watch state machine of one kind, as a pure step function: inputs (what happened) in,
 * the next state and the actions to take out. The driver runs one operation at a time per kind
 * (a list, a watch or a wait), tagged with `op`; an input about an older op is stale and ignored,
 * so a late line from an aborted watch can never be delivered twice or out of order.
 *
 * Gap-free by construction: a list is followed by a watch from the list's resourceVersion; a watch
 * that ends is resumed from the last resourceVersion seen (events and bookmarks); an expired
 * resourceVersion (410) or a periodic resync starts over with a list, which is posted as a resync.
 */
import { type BackoffOptions, backoffDelay } from "./backoff.ts";
import { describeStatus, type KubeList, objectResourceVersion, statusCode, type WatchEvent } from "./list.ts";

/** Where a kind is: between operations the state says what comes next. */
export type KindPhase = "idle" | "listing" | "watching" | "waiting" | "paused" | "stopped";

/** The state of one kind. */
export interface KindState {
  phase: KindPhase;
  /** The id of the operation in progress; inputs naming another op are stale. */
  op: number;
  /** The last resourceVersion seen: the list's, then each event's and bookmark's. */
  rv: string | undefined;
  /** Consecutive failures, for backoff; reset by a successful list or a live watch. */
  failures: number;
  /** What a wait leads to. */
  after: "list" | "watch";
  /** When the current watch started, and how many events (bookmarks included) it brought. */
  watchStart: number;
  watchEvents: number;
}

/** What happened: driver results (tagged with their op), timers, and commands from the relay. */
export type KindInput =
  | { type: "start" }
  | { type: "listed"; op: number; list: KubeList }
  | { type: "listFailed"; op: number; status?: number; message: string }
  | { type: "watchEvent"; op: number; event: WatchEvent }
  | { type: "watchEnded"; op: number; now: number; status?: number; error?: string }
  | { type: "timer"; op: number }
  | { type: "resync" }
  | { type: "pause" }
  | { type: "resume" }
  | { type: "stop" };

/** What to do, in order. list, watch, wait and cancel each end the operation in progress first. */
export type KindAction =
  | { do: "list"; op: number }
  | { do: "watch"; op: number; rv: string | undefined; now: number }
  | { do: "wait"; op: number; ms: number }
  | { do: "cancel" }
  | { do: "resync"; list: KubeList }
  | { do: "event"; event: WatchEvent }
  | { do: "log"; line: string };

/** Tunables and sources of time and randomness for step(). */
export interface KindContext {
  backoff: BackoffOptions;
  random: () => number;
  now: () => number;
  /** A watch that ends cleanly after living this long (or bringing an event) is resumed at once. */
  healthyWatchMs: number;
}

/** The state of a kind that has not started. */
export function initialKindState(): KindState {
  return { phase: "idle", op: 0, rv: undefined, failures: 0, after: "list", watchStart: 0, watchEvents: 0 };
}

type Step = [KindState, KindAction[]];

/** Advances one kind by one input. Never throws; stale inputs return the state unchanged. */
export function step(s: KindState, input: KindInput, ctx: KindContext): Step {
  if (s.phase === "stopped") return [s, []];
  const stale = "op" in input && input.op !== s.op;
  if (stale) return [s, []];
  switch (input.type) {
    case "start":
      return s.phase === "idle" ? list(s, []) : [s, []];
    case "listed": {
      const rv = input.list.metadata.resourceVersion || undefined;
      const next = { ...s, rv, failures: 0 };
      return watch(next, [{ do: "resync", list: input.list }], ctx);
    }
    case "listFailed": {
      const why = input.status === 403 ? " (forbidden: check the relay's ClusterRole)" : "";
      return wait(s, "list", `list failed: ${input.status ?? "error"} ${input.message}${why}`, ctx);
    }
    case "watchEvent":
      return onEvent(s, input.event, ctx);
    case "watchEnded":
      return onWatchEnded(s, input, ctx);
    case "timer":
      return s.phase === "waiting" ? (s.after === "list" ? list(s, []) : watch(s, [], ctx)) : [s, []];
    case "resync":
      // A list in progress, or a wait that leads to one, will post a resync anyway.
      if (s.phase === "listing" || (s.phase === "waiting" && s.after === "list")) return [s, []];
      return s.phase === "watching" || s.phase === "waiting" ? list(s, []) : [s, []];
    case "pause":
      if (s.phase === "paused") return [s, []];
      return [{ ...s, phase: "paused", op: s.op + 1 }, [{ do: "cancel" }]];
    case "resume":
      return s.phase === "paused" ? list(s, []) : [s, []];
    case "stop":
      return [{ ...s, phase: "stopped", op: s.op + 1 }, [{ do: "cancel" }]];
  }
}

function list(s: KindState, before: KindAction[]): Step {
  const op = s.op + 1;
  return [{ ...s, phase: "listing", op }, [...before, { do: "list", op }]];
}

function watch(s: KindState, before: KindAction[], ctx: KindContext): Step {
  const op = s.op + 1;
  const now = ctx.now();
  return [
    { ...s, phase: "watching", op, watchStart: now, watchEvents: 0 },
    [...before, { do: "watch", op, rv: s.rv, now }],
  ];
}

function wait(s: KindState, after: "list" | "watch", why: string, ctx: KindContext): Step {
  const op = s.op + 1;
  const ms = backoffDelay(s.failures, ctx.backoff, ctx.random);
  const line = `${why}; ${after === "list" ? "relisting" : "watching again"} in ${ms}ms (failure ${s.failures + 1})`;
  return [
    { ...s, phase: "waiting", op, after, failures: s.failures + 1 },
    [
      { do: "log", line },
      { do: "wait", op, ms },
    ],
  ];
}

function relist(s: KindState, why: string): Step {
  return list(s, [{ do: "log", line: `${why}: relisting and resyncing` }]);
}

function onEvent(s: KindState, event: WatchEvent, ctx: KindContext): Step {
  switch (event.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED": {
      const rv = objectResourceVersion(event.object) ?? s.rv;
      return [{ ...s, rv, failures: 0, watchEvents: s.watchEvents + 1 }, [{ do: "event", event }]];
    }
    case "BOOKMARK": {
      const rv = objectResourceVersion(event.object) ?? s.rv;
      return [{ ...s, rv, failures: 0, watchEvents: s.watchEvents + 1 }, []];
    }
    case "ERROR":
      if (statusCode(event.object) === 410) {
        return relist(s, `resourceVersion ${s.rv} expired (${describeStatus(event.object)})`);
      }
      return wait(s, "watch", `watch error event: ${describeStatus(event.object)}`, ctx);
    default:
      return [
        s,
        [{ do: "log", line: `ignored a watch event of unknown type ${JSON.stringify(event.type)}` }],
      ];
  }
}

function onWatchEnded(
  s: KindState,
  input: Extract<KindInput, { type: "watchEnded" }>,
  ctx: KindContext,
): Step {
  if (input.status === 410) return relist(s, `watch from resourceVersion ${s.rv} answered 410 Gone`);
  const clean = input.status === undefined && input.error === undefined;
  const healthy = s.watchEvents > 0 || input.now - s.watchStart >= ctx.healthyWatchMs;
  if (clean && healthy) return watch({ ...s, failures: 0 }, [], ctx);
  const why = clean
    ? "watch closed at once without an event"
    : `watch failed: ${[input.status, input.error].filter((x) => x !== undefined).join(" ")}`;
  return wait(s, "watch", why, ctx);
}
