/**
 * Drives debounce turns with a timer on Node. One turn runs at a time; a poke during a turn
 * runs another right after it, so nothing that arrives mid-push waits past its own debounce.
 */
import { turnFailedLine, turnRetryMs } from "../../lib/core/push-log.ts";
import { logError } from "../../lib/log/line-log.ts";

export interface DebounceTimer {
  /** Something was queued: run a turn now (it decides whether to push or wait). */
  poke(): void;
  /** Stops the timer; resolves when a running turn has finished. */
  stop(): Promise<void>;
}

export interface DebounceTimerOptions {
  /** One turn (the mesh core's); says when to come back (null: nothing queued). */
  turn: () => Promise<{ nextAt: number | null }>;
  now: () => number;
  log?: (line: string) => void;
  /** Retry delay after a failed turn (ms); default the core's turnRetryMs. */
  retryMs?: number;
}

/** Creates the timer; nothing runs until the first poke. */
export function createDebounceTimer(options: DebounceTimerOptions): DebounceTimer {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const schedule = (at: number) => {
    if (stopped || at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        run();
      },
      Math.max(0, at - options.now()),
    );
  };

  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        const turn = await options.turn();
        if (turn.nextAt !== null) schedule(turn.nextAt);
      } catch (err) {
        if (options.log) logError(options.log, turnFailedLine(err));
        schedule(options.now() + (options.retryMs ?? turnRetryMs));
      } finally {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      }
    })();
  };

  return {
    poke: run,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
