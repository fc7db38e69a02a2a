/**
 * The core's observers: what metrics and debug surfaces hang on (one list per core, so every host
 * reports the same events). Observers are told after the fact and cannot change what the core
 * does; one that throws is logged and the others still run.
 */
import type { ApplySummary } from "../ingest/apply.ts";
import { logSafe } from "../log-safe.ts";
import type { DebounceTurn } from "../push/run.ts";

/** One flush of a debounce turn (a push, or a no-op flush that found nothing to change). */
export type Flush = DebounceTurn["flushes"][number];

/** An ingest call the core applied. */
export interface IngestReport {
  call: "events" | "resync" | "admission";
  cluster: string;
  /** The resync's kind (only for `resync`). */
  kind?: string;
  summary: ApplySummary;
}

/** A debounce turn the core ran, with when it began and ended (the core's clock). */
export interface TurnReport {
  turn: DebounceTurn;
  startedAt: number;
  endedAt: number;
}

/** A push announced on the change feed: its flush, and how long after its first event it went out. */
export interface PushReport {
  flush: Flush;
  latencyMs: number;
  /** Streams the feed reached when it was announced. */
  streams: number;
}

/** What an observer may listen to; every method is optional. */
export interface MeshObserver {
  onIngest?(report: IngestReport): void;
  onTurn?(report: TurnReport): void;
  onPush?(report: PushReport): void;
}

/** The observer list: hosts and surfaces add observers, the core reports to all of them. */
export interface MeshHooks {
  /** Adds an observer; returns the function that removes it. */
  observe(observer: MeshObserver): () => void;
  ingest(report: IngestReport): void;
  turn(report: TurnReport): void;
  push(report: PushReport): void;
}

/** An empty list; `log` takes the line for an observer that threw. */
export function createMeshHooks(log: (line: string) => void): MeshHooks {
  const observers = new Set<MeshObserver>();
  const tell = (method: keyof MeshObserver, call: (o: MeshObserver) => void) => {
    for (const o of [...observers]) {
      try {
        call(o);
      } catch (err) {
        log(`core: an ${method} observer failed: ${logSafe(err instanceof Error ? err.message : err)}`);
      }
    }
  };
  return {
    observe(observer) {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    ingest: (report) => tell("onIngest", (o) => o.onIngest?.(report)),
    turn: (report) => tell("onTurn", (o) => o.onTurn?.(report)),
    push: (report) => tell("onPush", (o) => o.onPush?.(report)),
  };
}
