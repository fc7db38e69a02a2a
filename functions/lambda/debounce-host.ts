/**
 * The debounce function's handler: invoked by EventBridge Scheduler every minute (the safety net)
 * and by the ingest function after a batch that queued a push. It runs the core's debounce turns
 * until nothing is due, waiting out PILOT_DEBOUNCE_AFTER between turns as the decision says, while
 * the invocation has time left. One flush runs at a time across every container: the flush lease
 * (lib/push/flush.ts, a conditional lease item); an invocation that finds it held returns at once,
 * leaving the queue to the holder, whose loop reads the queue again after its flush.
 */
import type { Context as LambdaContext } from "aws-lambda";
import { turnFailedLine, turnRetryMs } from "../../lib/core/push-log.ts";
import { logDebug, logError } from "../../lib/log/line-log.ts";
import type { DebounceTurn } from "../../lib/push/run.ts";
import { coldStartLogger, createLambdaMesh, type LambdaDeps } from "./mesh.ts";

/** Time kept back at the end of an invocation: no turn starts with less left (ms). */
export const debounceMarginMs = 5_000;

/** What the loop does after a turn: pure, so it is tested with numbers. */
export type AfterTurn =
  | { kind: "done" }
  | { kind: "busy" }
  | { kind: "wait"; ms: number }
  | { kind: "leave"; dueInMs: number };

/**
 * After a turn at `now` with `remainingMs` left in the invocation: done (queue empty), busy (another
 * invocation holds the flush lease), wait until the next turn is due, or leave it to the next
 * invocation (the schedule, or the next ingest) when it is due past the margin.
 */
export function afterTurn(
  turn: Pick<DebounceTurn, "nextAt" | "busy">,
  now: number,
  remainingMs: number,
  marginMs = debounceMarginMs,
): AfterTurn {
  if (turn.busy) return { kind: "busy" };
  if (turn.nextAt === null) return { kind: "done" };
  const ms = Math.max(0, turn.nextAt - now);
  return remainingMs - ms < marginMs ? { kind: "leave", dueInMs: ms } : { kind: "wait", ms };
}

/** What one invocation did (its result; the log says the same). */
export interface DebounceSummary {
  turns: number;
  pushes: number;
  /** How the invocation ended: the last decision, or failed turns that ran out of time. */
  ended: AfterTurn["kind"] | "failed";
}

export interface DebounceHostDeps extends LambdaDeps {
  /** Waits `ms` (injected by tests; default a timer). */
  sleep?: (ms: number) => Promise<void>;
  /** performance.now() when the entry module was loaded (cold start). */
  loadedAt?: number;
  /** Kept back at the end of an invocation (ms); default debounceMarginMs. */
  marginMs?: number;
}

/** The debounce handler; its event (a schedule's or ingest's) says nothing it needs. */
export type DebounceHandler = (
  event: unknown,
  context: Pick<LambdaContext, "getRemainingTimeInMillis">,
) => Promise<DebounceSummary>;

/** Builds the container's core now; each invocation runs turns as above. */
export function createDebounceHandler(deps: DebounceHostDeps): DebounceHandler {
  const { log } = deps;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const mesh = createLambdaMesh(deps);
  const cold = coldStartLogger(log, "debounce", deps.loadedAt ?? performance.now());
  return async (_event, context) => {
    await mesh.started;
    const summary: DebounceSummary = { turns: 0, pushes: 0, ended: "done" };
    for (;;) {
      let next: AfterTurn;
      try {
        const turn = await mesh.core.turn();
        summary.turns++;
        summary.pushes += turn.flushes.length;
        next = afterTurn(turn, now(), context.getRemainingTimeInMillis(), deps.marginMs);
      } catch (err) {
        logError(log, turnFailedLine(err));
        const retry = afterTurn(
          { nextAt: now() + turnRetryMs },
          now(),
          context.getRemainingTimeInMillis(),
          deps.marginMs,
        );
        if (retry.kind === "leave") {
          summary.ended = "failed";
          break;
        }
        next = retry;
      }
      summary.ended = next.kind;
      if (next.kind === "wait") {
        await sleep(next.ms);
        continue;
      }
      if (next.kind === "busy")
        logDebug(log, "debounce: another invocation holds the flush lease; the queue is left to it");
      if (next.kind === "leave")
        logDebug(
          log,
          `debounce: the next turn is due in ${next.dueInMs}ms, past this invocation's time; left to the next one`,
        );
      break;
    }
    cold();
    return summary;
  };
}
