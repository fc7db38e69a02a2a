/**
 * The relay's status writer as a pure step function (as kind-machine.ts): inputs in, the next state
 * and the actions out; the driver (functions/node/relay/status-writer.ts) runs one operation at a
 * time, tagged with `op`, so a late answer of an older operation is stale and ignored.
 *
 * A round: fetch the control plane's statuses (with the last ETag: an unchanged mesh answers 304),
 * then for each object whose status we have not yet settled, read the object, merge ours into its
 * live status (status-merge.ts) and PUT the result to its status subresource when it differs.
 * Settled objects are not read again until the control plane's status for them changes. A 409 or
 * 404 leaves the object to the next round (never a loop); 5xx, 429 and network failures end the
 * round and back off; at most `maxWritesPerRound` writes a round. A tick during a round runs one
 * more round after it.
 */

import { logSafe } from "../log-safe.ts";
import type { GatewayApiStatus } from "../registry/gateway-api/gateway-status.ts";
import { sameJson } from "../same-json.ts";
import { type BackoffOptions, backoffDelay } from "./backoff.ts";
import { kubeTime, mergeStatus, sameStatus } from "./status-merge.ts";

/** Where the writer is. */
export type StatusPhase = "idle" | "fetching" | "reading" | "writing" | "waiting" | "stopped";

/** What the writer knows of one object: the status we want it to have, and whether it has it. */
export interface StatusTarget {
  ours: GatewayApiStatus;
  /** Written, found equal, or not to be retried until ours changes (gone, forbidden, refused). */
  settled: boolean;
}

/** The writer's state. */
export interface StatusState {
  phase: StatusPhase;
  op: number;
  /** The ETag of the last statuses fetched. */
  etag: string | undefined;
  /** Every object the control plane reported last, by statusTargetId. */
  targets: ReadonlyMap<string, StatusTarget>;
  /** This round's objects still to handle, in order; the first is the one being read or written. */
  work: readonly string[];
  /** Writes made this round. */
  writes: number;
  /** A tick came during this round: run another when it ends. */
  again: boolean;
  /** Consecutive failed rounds, for backoff. */
  failures: number;
  /** The control plane answered 404 (no gateway status served): said once, until it serves it. */
  unserved: boolean;
}

/** An HTTP answer as the machine reads it: a status code (and the API server's Status reason), or a network failure. */
export type StatusHttp = { status: number; reason?: string } | { error: string };

/** What happened. */
export type StatusInput =
  | { type: "tick" }
  | {
      type: "fetched";
      op: number;
      answer: { status: 200; statuses: GatewayApiStatus[]; etag: string | undefined } | StatusHttp;
    }
  | { type: "read"; op: number; answer: { status: 200; object: Record<string, unknown> } | StatusHttp }
  | { type: "wrote"; op: number; answer: StatusHttp }
  | { type: "timer"; op: number }
  /** The relay saw the object in a watch event (its own write's echo, or someone else's change). */
  | { type: "seen"; object: Record<string, unknown> }
  | { type: "stop" };

/** The outcome of one object, counted by kind (the relay's status stats). */
export type StatusOutcome = "written" | "unchanged" | "conflict" | "failed";

/** What to do, in order. */
export type StatusAction =
  | { do: "fetch"; op: number; etag: string | undefined }
  | { do: "read"; op: number; target: GatewayApiStatus }
  | { do: "write"; op: number; target: GatewayApiStatus; object: Record<string, unknown> }
  | { do: "wait"; op: number; ms: number }
  | { do: "count"; kind: string; outcome: StatusOutcome }
  | { do: "log"; level: "info" | "warn" | "error"; line: string };

/** Tunables and the sources of time and randomness. */
export interface StatusContext {
  backoff: BackoffOptions;
  random: () => number;
  now: () => number;
  maxWritesPerRound: number;
}

/** The state before the first tick. */
export function initialStatusState(): StatusState {
  return {
    phase: "idle",
    op: 0,
    etag: undefined,
    targets: new Map(),
    work: [],
    writes: 0,
    again: false,
    failures: 0,
    unserved: false,
  };
}

/** One object's identity: group, kind, namespace and name (the version is not part of it). */
export function statusTargetId(s: Pick<GatewayApiStatus, "group" | "kind" | "namespace" | "name">): string {
  return JSON.stringify([s.group, s.kind, s.namespace ?? "", s.name]);
}

/** How an object is named in log lines: its kind and namespace/name, escaped. */
export function describeTarget(t: Pick<GatewayApiStatus, "kind" | "namespace" | "name">): string {
  return logSafe(`${t.kind} ${t.namespace === undefined ? "" : `${t.namespace}/`}${t.name}`);
}

type Step = [StatusState, StatusAction[]];

/** Advances the writer by one input. Never throws; stale inputs change nothing. */
export function statusStep(s: StatusState, input: StatusInput, ctx: StatusContext): Step {
  if (s.phase === "stopped") return [s, []];
  if ("op" in input && input.op !== s.op) return [s, []];
  switch (input.type) {
    case "tick":
      if (s.phase === "idle") return round(s, []);
      // A waiting writer's timer starts the next round anyway.
      return s.phase === "waiting" ? [s, []] : [{ ...s, again: true }, []];
    case "timer":
      return s.phase === "waiting" ? round(s, []) : [s, []];
    case "fetched":
      return s.phase === "fetching" ? onFetched(s, input.answer, ctx) : [s, []];
    case "read":
      return s.phase === "reading" ? onRead(s, input.answer, ctx) : [s, []];
    case "wrote":
      return s.phase === "writing" ? onWrote(s, input.answer, ctx) : [s, []];
    case "seen":
      return [onSeen(s, input.object, ctx), []];
    case "stop":
      return [{ ...s, phase: "stopped", op: s.op + 1, work: [] }, []];
  }
}

/**
 * A settled object seen with a status that no longer holds ours (another writer changed it) is
 * unsettled, so the next round reads and writes it again, as istiod reacts to the live status. Our
 * own write's echo holds ours and changes nothing.
 */
function onSeen(s: StatusState, object: Record<string, unknown>, ctx: StatusContext): StatusState {
  const meta = object.metadata as { name?: unknown; namespace?: unknown } | undefined;
  const apiVersion = typeof object.apiVersion === "string" ? object.apiVersion : "";
  if (typeof object.kind !== "string" || typeof meta?.name !== "string") return s;
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const namespace = typeof meta.namespace === "string" ? meta.namespace : undefined;
  const id = statusTargetId({ group, kind: object.kind, namespace, name: meta.name });
  const target = s.targets.get(id);
  if (!target?.settled) return s;
  const live = typeof object.status === "object" && object.status !== null ? object.status : {};
  if (sameStatus(mergeStatus(live, target.ours, kubeTime(ctx.now())), live)) return s;
  return { ...s, targets: new Map(s.targets).set(id, { ...target, settled: false }) };
}

function round(s: StatusState, before: StatusAction[]): Step {
  const op = s.op + 1;
  return [
    { ...s, phase: "fetching", op, work: [], writes: 0, again: false },
    [...before, { do: "fetch", op, etag: s.etag }],
  ];
}

/** The round is over: idle, or straight into the next one when a tick came meanwhile. */
function finish(s: StatusState, before: StatusAction[]): Step {
  const done: StatusState = { ...s, phase: "idle", work: [], writes: 0, failures: 0 };
  return s.again ? round(done, before) : [done, before];
}

function wait(s: StatusState, why: string, ctx: StatusContext, before: StatusAction[] = []): Step {
  const op = s.op + 1;
  const ms = backoffDelay(s.failures, ctx.backoff, ctx.random);
  return [
    { ...s, phase: "waiting", op, work: [], writes: 0, again: false, failures: s.failures + 1 },
    [
      ...before,
      { do: "log", level: "warn", line: `relay: status: ${why}; next round in ${ms}ms` },
      { do: "wait", op, ms },
    ],
  ];
}

/** The answer's HTTP status; undefined for a network failure. */
function code(a: StatusHttp): number | undefined {
  return "error" in a ? undefined : a.status;
}

/** Whether an answer is worth retrying after a backoff: the network, 5xx, 408, 429. */
function transient(a: StatusHttp): boolean {
  return "error" in a || a.status >= 500 || a.status === 408 || a.status === 429;
}

function describeHttp(a: StatusHttp): string {
  return "error" in a
    ? `network: ${logSafe(a.error, 200)}`
    : `${a.status}${a.reason ? ` ${logSafe(a.reason, 100)}` : ""}`;
}

function onFetched(
  s: StatusState,
  answer: Extract<StatusInput, { type: "fetched" }>["answer"],
  ctx: StatusContext,
): Step {
  if ("statuses" in answer) {
    const targets = new Map<string, StatusTarget>();
    for (const ours of answer.statuses) {
      const id = statusTargetId(ours);
      const before = s.targets.get(id);
      targets.set(id, {
        ours,
        settled: before?.settled === true && sameJson(before.ours, ours),
      });
    }
    const next = { ...s, targets, etag: answer.etag, unserved: false };
    return nextTarget({ ...next, work: pending(targets) }, [], ctx);
  }
  if (!("error" in answer) && answer.status === 304)
    return nextTarget({ ...s, unserved: false, work: pending(s.targets) }, [], ctx);
  if (transient(answer)) return wait(s, `GET /v1/gateway-status failed: ${describeHttp(answer)}`, ctx);
  if (code(answer) === 401)
    return wait(s, "GET /v1/gateway-status: 401 (check EDGEPILOT_TOKEN against the control plane's)", ctx);
  if (code(answer) === 404) {
    const said: StatusAction[] = s.unserved
      ? []
      : [
          {
            do: "log",
            level: "info",
            line: "relay: status: the control plane serves no /v1/gateway-status (404); asking again each round",
          },
        ];
    return finish({ ...s, unserved: true }, said);
  }
  return finish(s, [
    {
      do: "log",
      level: "error",
      line: `relay: status: GET /v1/gateway-status answered ${describeHttp(answer)}`,
    },
  ]);
}

function pending(targets: ReadonlyMap<string, StatusTarget>): string[] {
  return [...targets].filter(([, t]) => !t.settled).map(([id]) => id);
}

/** Reads the next object of the round, or ends it (nothing left, or this round's writes spent). */
function nextTarget(s: StatusState, before: StatusAction[], ctx: StatusContext): Step {
  const id = s.work[0];
  const target = id === undefined ? undefined : s.targets.get(id);
  if (id === undefined || target === undefined) return finish(s, before);
  if (s.writes >= ctx.maxWritesPerRound)
    return finish(s, [
      ...before,
      {
        do: "log",
        level: "info",
        line: `relay: status: ${s.writes} writes this round (the most per round); ${s.work.length} object(s) wait for the next`,
      },
    ]);
  const op = s.op + 1;
  return [{ ...s, phase: "reading", op }, [...before, { do: "read", op, target: target.ours }]];
}

/** The current object done with: settled or left for the next round, then on to the next. */
function advance(s: StatusState, settled: boolean, before: StatusAction[], ctx: StatusContext): Step {
  const [id, ...rest] = s.work;
  let targets = s.targets;
  const t = id === undefined ? undefined : s.targets.get(id);
  if (id !== undefined && t && settled) targets = new Map(s.targets).set(id, { ...t, settled: true });
  return nextTarget({ ...s, targets, work: rest }, before, ctx);
}

function current(s: StatusState): GatewayApiStatus {
  return (s.targets.get(s.work[0] as string) as StatusTarget).ours;
}

function onRead(
  s: StatusState,
  answer: Extract<StatusInput, { type: "read" }>["answer"],
  ctx: StatusContext,
): Step {
  const ours = current(s);
  if ("object" in answer) {
    const live = answer.object.status;
    const merged = mergeStatus(live, ours, kubeTime(ctx.now()));
    if (sameStatus(merged, typeof live === "object" && live !== null ? live : {}))
      return advance(s, true, [{ do: "count", kind: ours.kind, outcome: "unchanged" }], ctx);
    const op = s.op + 1;
    return [
      { ...s, phase: "writing", op },
      [{ do: "write", op, target: ours, object: { ...answer.object, status: merged } }],
    ];
  }
  if (transient(answer)) return wait(s, `GET ${describeTarget(ours)} failed: ${describeHttp(answer)}`, ctx);
  // Not in this cluster (or deleted since): nothing to write until the control plane says otherwise.
  if (code(answer) === 404) return advance(s, true, [], ctx);
  const hint = code(answer) === 403 ? " (forbidden: check the relay's ClusterRole)" : "";
  return advance(
    s,
    true,
    [
      { do: "count", kind: ours.kind, outcome: "failed" },
      {
        do: "log",
        level: "error",
        line: `relay: status: GET ${describeTarget(ours)} answered ${describeHttp(answer)}${hint}`,
      },
    ],
    ctx,
  );
}

function onWrote(s: StatusState, answer: StatusHttp, ctx: StatusContext): Step {
  const ours = current(s);
  const counted = { ...s, writes: s.writes + 1 };
  const status = code(answer) ?? 0;
  if (status >= 200 && status < 300)
    return advance(counted, true, [{ do: "count", kind: ours.kind, outcome: "written" }], ctx);
  if (status === 409)
    // Changed since we read it: read again and merge at the next round.
    return advance(
      counted,
      false,
      [
        { do: "count", kind: ours.kind, outcome: "conflict" },
        {
          do: "log",
          level: "info",
          line: `relay: status: ${describeTarget(ours)} changed while writing (409); again next round`,
        },
      ],
      ctx,
    );
  if (status === 404) return advance(counted, true, [], ctx);
  const failed: StatusAction = { do: "count", kind: ours.kind, outcome: "failed" };
  if (transient(answer))
    return wait(counted, `PUT ${describeTarget(ours)} status failed: ${describeHttp(answer)}`, ctx, [failed]);
  const hint =
    !("error" in answer) && answer.status === 403
      ? " (forbidden: check the relay's ClusterRole for <resource>/status)"
      : "";
  return advance(
    counted,
    true,
    [
      failed,
      {
        do: "log",
        level: "error",
        line: `relay: status: PUT ${describeTarget(ours)} status answered ${describeHttp(answer)}${hint}; not retried until its status changes`,
      },
    ],
    ctx,
  );
}
